'use strict';

const { validate, dayStartMs } = require('./ast');
const { tokenize } = require('./tokenize');

const DAY_MS = 24 * 60 * 60 * 1000;

// IMAP SEARCH keys for the substring fields (RFC 3501 6.4.4: case-insensitive substring).
const SUBSTRING_KEYS = Object.freeze({
  from: 'from',
  to: 'to',
  cc: 'cc',
  subject: 'subject',
  body: 'body',
  text: 'text',
});

const FLAG_KEYS = Object.freeze({
  '\\Seen': 'seen',
  '\\Flagged': 'flagged',
  '\\Deleted': 'deleted',
  '\\Answered': 'answered',
  '\\Draft': 'draft',
});

const ALL = Object.freeze({ all: true });

/**
 * Compile an AST into an imapflow search object (the IMAP SEARCH keys of RFC 3501 6.4.4).
 *
 * Not every term has an exact IMAP equivalent: word and phrase search (IMAP only has
 * substring TEXT), `has:attachment`, `in:`, dates (SENTBEFORE/SENTON/SENTSINCE compare the
 * Date header's calendar day in its own zone, mailgate compares UTC days) and sizes (servers
 * report RFC822.SIZE with CRLF line ends). Those compile to a key set that matches a
 * **superset** of the answer, and `exact` is false: the caller must then check each candidate
 * with compilePredicate(ast). A superset is kept under negation by widening `NOT inexact` to
 * ALL.
 *
 * @param {object} ast a query AST (validated here)
 * @returns {{search: object, exact: boolean}} search: an imapflow `client.search()` object
 * @throws {QueryError} for a malformed AST
 */
function compileImap(ast) {
  validate(ast);
  return build(ast);
}

function build(node) {
  switch (node.type) {
    case 'all':
      return { search: { ...ALL }, exact: true };
    case 'and': {
      const parts = node.children.map(build);
      return { search: and(parts.map((p) => p.search)), exact: parts.every((p) => p.exact) };
    }
    case 'or': {
      const parts = node.children.map(build);
      const exact = parts.every((p) => p.exact);
      if (parts.some((p) => p.search.all && Object.keys(p.search).length === 1)) {
        return { search: { ...ALL }, exact };
      }
      return { search: { or: parts.map((p) => p.search) }, exact };
    }
    case 'not': {
      const inner = build(node.child);
      // NOT of a superset would be a subset: widen to ALL and let the predicate decide.
      if (!inner.exact) return { search: { ...ALL }, exact: false };
      return { search: { not: inner.search }, exact: true };
    }
    case 'word':
    case 'phrase': {
      // Every token must occur as a word, so each occurs as a substring of the message text:
      // TEXT per token is a superset (punctuation between phrase words is not an issue).
      const tokens = tokenize(node.value);
      if (!tokens.length) return { search: { uid: '0' }, exact: true }; // matches nothing
      return { search: and(tokens.map((t) => ({ text: t }))), exact: false };
    }
    case 'substring':
      return { search: { [SUBSTRING_KEYS[node.field]]: node.value }, exact: true };
    case 'flag': {
      const key = FLAG_KEYS[node.flag];
      return { search: { [key]: node.negate !== true }, exact: true };
    }
    case 'hasAttachment':
    case 'mailbox':
      return { search: { ...ALL }, exact: false };
    case 'date': {
      // Widen by a day on each side: the header's own zone may put the day off by one.
      const start = dayStartMs(node.value);
      const day = (ms) => new Date(ms);
      if (node.op === 'before')
        return { search: { sentBefore: day(start + DAY_MS) }, exact: false };
      if (node.op === 'after') return { search: { sentSince: day(start - DAY_MS) }, exact: false };
      return {
        search: { sentSince: day(start - DAY_MS), sentBefore: day(start + 2 * DAY_MS) },
        exact: false,
      };
    }
    case 'size':
      // RFC822.SIZE counts CRLF line ends, so it is >= the stored size: LARGER stays a superset.
      if (node.op === 'larger') return { search: { larger: node.value }, exact: false };
      return { search: { ...ALL }, exact: false };
    /* istanbul ignore next: validate() has rejected every other type */
    default:
      throw new TypeError(`compileImap: unknown node type ${node.type}`);
  }
}

/**
 * AND of search objects. IMAP ANDs juxtaposed keys, but an object cannot hold a key twice:
 * objects are merged while their keys do not collide; a colliding one becomes the operand
 * `NOT NOT x` (imapflow parenthesises it), or, once `not` is taken too, De Morgan's
 * `NOT (NOT a OR NOT b)`.
 */
function and(list) {
  const out = {};
  const extra = [];
  for (const s of list) {
    if (s.all && Object.keys(s).length === 1) continue;
    if (Object.keys(s).some((k) => k in out)) extra.push(s);
    else Object.assign(out, s);
  }
  let result = Object.keys(out).length ? out : null;
  for (const s of extra) {
    // NOT NOT x is x: a parenthesised operand that may repeat keys of the outer object.
    const wrapped = { not: { not: s } };
    if (!result) result = s;
    else if (!('not' in result)) result = { ...result, ...wrapped };
    else result = { not: { or: [{ not: result }, { not: s }] } }; // De Morgan, RFC 3501 6.4.4
  }
  return result || { ...ALL };
}

module.exports = { compileImap };
