'use strict';

const { validate, dayStartMs } = require('./ast');
const { tokenize } = require('./tokenize');

const DAY_MS = 24 * 60 * 60 * 1000;

const SUBSTRING_PROPS = Object.freeze({
  from: ['fromText'],
  to: ['toText'],
  cc: ['ccText'],
  subject: ['subject'],
  body: ['bodyText'],
  text: ['headerText', 'bodyText'],
});

// The fields that feed the PostgreSQL tsvector (subject, from/to/cc, body).
const WORD_PROPS = Object.freeze(['subject', 'fromText', 'toText', 'ccText', 'bodyText']);

/**
 * Compile an AST into a predicate over an in-memory message with the same semantics as
 * compileSql(). A missing field behaves like a NULL column: it matches no positive term, so
 * a negated term matches it.
 *
 * Message shape: { fromText, toText, ccText, subject, headerText, bodyText, date: Date|null,
 * size, flags: string[], hasAttachments, mailbox, words?: Set<string> }. `words`, when given,
 * must be the tokenize() output of the word-search fields and is used for bare words.
 * @param {object} ast a query AST (validated here)
 * @param {object} [_opts] reserved, for symmetry with compileSql
 * @returns {(msg: object) => boolean}
 * @throws {QueryError} for a malformed AST
 */
function compilePredicate(ast, _opts = {}) {
  validate(ast);
  // Tokens and lowercased fields are computed once per message, however many terms use them.
  const cache = new WeakMap();
  const test = build(ast, (msg) => {
    let entry = cache.get(msg);
    if (!entry) {
      entry = { lower: {}, fieldTokens: null, words: null };
      cache.set(msg, entry);
    }
    return entry;
  });
  return (msg) => test(msg) === true;
}

function build(node, state) {
  switch (node.type) {
    case 'all':
      return () => true;
    case 'and': {
      const tests = node.children.map((c) => build(c, state));
      return (msg) => tests.every((t) => t(msg));
    }
    case 'or': {
      const tests = node.children.map((c) => build(c, state));
      return (msg) => tests.some((t) => t(msg));
    }
    case 'not': {
      const t = build(node.child, state);
      return (msg) => !t(msg);
    }
    case 'word': {
      const tokens = tokenize(node.value);
      // Like plainto_tsquery: every token must occur; no tokens at all matches nothing.
      if (tokens.length === 0) return () => false;
      return (msg) => {
        const words = wordSet(msg, state);
        return tokens.every((t) => words.has(t));
      };
    }
    case 'phrase': {
      const tokens = tokenize(node.value);
      if (tokens.length === 0) return () => false;
      return (msg) => fieldTokens(msg, state).some((list) => containsRun(list, tokens));
    }
    case 'substring': {
      const needle = node.value.toLowerCase();
      const props = SUBSTRING_PROPS[node.field];
      return (msg) => props.some((p) => lowered(msg, p, state).includes(needle));
    }
    case 'flag': {
      const flag = node.flag;
      const has = (msg) => Array.isArray(msg.flags) && msg.flags.includes(flag);
      return node.negate === true ? (msg) => !has(msg) : has;
    }
    case 'hasAttachment':
      return (msg) => msg.hasAttachments === true;
    case 'date': {
      const start = dayStartMs(node.value);
      const cmp = {
        before: (t) => t < start,
        after: (t) => t >= start,
        on: (t) => t >= start && t < start + DAY_MS,
      }[node.op];
      return (msg) => {
        const t = msg.date instanceof Date ? msg.date.getTime() : NaN;
        return !Number.isNaN(t) && cmp(t);
      };
    }
    case 'size': {
      const v = node.value;
      if (node.op === 'larger') return (msg) => typeof msg.size === 'number' && msg.size > v;
      return (msg) => typeof msg.size === 'number' && msg.size < v;
    }
    case 'mailbox': {
      const name = node.value;
      return (msg) => msg.mailbox === name;
    }
    /* istanbul ignore next: validate() has rejected every other type */
    default:
      throw new TypeError(`compilePredicate: unknown node type ${node.type}`);
  }
}

function lowered(msg, prop, state) {
  const entry = state(msg);
  if (!(prop in entry.lower)) {
    const v = msg[prop];
    entry.lower[prop] = typeof v === 'string' ? v.toLowerCase() : '';
  }
  return entry.lower[prop];
}

function fieldTokens(msg, state) {
  const entry = state(msg);
  // Per field, so a phrase never spans the end of the subject and the start of the body.
  if (!entry.fieldTokens) entry.fieldTokens = WORD_PROPS.map((p) => tokenize(msg[p]));
  return entry.fieldTokens;
}

function wordSet(msg, state) {
  if (msg.words instanceof Set) return msg.words;
  const entry = state(msg);
  if (!entry.words) entry.words = new Set(fieldTokens(msg, state).flat());
  return entry.words;
}

function containsRun(list, run) {
  outer: for (let i = 0; i + run.length <= list.length; i += 1) {
    for (let j = 0; j < run.length; j += 1) {
      if (list[i + j] !== run[j]) continue outer;
    }
    return true;
  }
  return false;
}

module.exports = { compilePredicate };
