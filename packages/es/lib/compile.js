'use strict';

const { errors } = require('@mailgate/core');
const { validate } = require('@mailgate/query');
const { queryTokens } = require('./words');

/*
 * The query-language AST (@mailgate/query) compiled to an Elasticsearch query. Everything runs
 * in filter context: results are a set (sorted by mailbox and uid like the pg backend), never
 * ranked, so no scoring work is done.
 *
 * Semantics per node, and where ES differs from PostgreSQL (README "Operators on ES"):
 * - word / phrase: `match` (all tokens) / `match_phrase` on `words`, whose tokens are the
 *   message's PostgreSQL lexemes (words.js). The query's words are PostgreSQL's lexemes of
 *   the same text (opts.lexemes, from lexemesOf), so ES looks up exactly the lexemes that
 *   plainto_tsquery / phraseto_tsquery would: one tokenisation for both backends.
 * - from: to: cc: subject: — IMAP substring: a case-insensitive `wildcard` `*value*` on the
 *   untokenized keyword field (values over 32766 UTF-8 bytes are not indexed there).
 * - body: and text: — substring search over whole bodies needs n-gram indexes, which a stock
 *   node without analysis-common cannot build; rather than answer with different semantics,
 *   these are refused with ES_UNSUPPORTED_QUERY (use backend=pg).
 */

const SUBSTRING_FIELDS = Object.freeze({
  from: 'from_raw',
  to: 'to_raw',
  cc: 'cc_raw',
  subject: 'subject_raw',
});

/** Escapes the wildcard query's metacharacters so the value matches literally. */
function wildcardEscape(s) {
  return s.replace(/[\\*?]/g, (c) => `\\${c}`);
}

/**
 * Compiles a query AST to an Elasticsearch query object (for `query:` of a search).
 * @param {object} ast a query AST (validated here)
 * @param {{lexemes?: Map<string, Array<[number, string]>>}} [opts] lexemes: PostgreSQL's
 *   lexemes of every word and phrase value of the AST (textValues + lexemesOf); required when
 *   the AST has words or phrases
 * @returns {object} ES query DSL
 * @throws {Error} INVALID_QUERY for a malformed AST, ES_UNSUPPORTED_QUERY for body:/text:
 */
function compileEs(ast, opts = {}) {
  try {
    validate(ast);
  } catch (err) {
    if (err.code === 'INVALID_QUERY') throw new errors.INVALID_QUERY(err.message);
    throw err;
  }
  return emit(ast, opts.lexemes || new Map());
}

function tokensOf(lexemes, value) {
  if (!lexemes.has(value)) {
    throw new TypeError(`compileEs: no PostgreSQL lexemes given for ${JSON.stringify(value)}`);
  }
  return queryTokens(lexemes.get(value));
}

function emit(node, lexemes) {
  const recurse = (n) => emit(n, lexemes);
  switch (node.type) {
    case 'all':
      return { match_all: {} };
    case 'and':
      return { bool: { filter: node.children.map(recurse) } };
    case 'or':
      return { bool: { should: node.children.map(recurse), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [recurse(node.child)] } };
    case 'word':
    case 'phrase': {
      // No lexeme at all (only punctuation): pg's empty tsquery matches nothing.
      const tokens = tokensOf(lexemes, node.value);
      if (!tokens.length) return { match_none: {} };
      const query = tokens.join(' ');
      return node.type === 'word'
        ? { match: { words: { query, operator: 'and' } } }
        : { match_phrase: { words: { query } } };
    }
    case 'substring': {
      const field = SUBSTRING_FIELDS[node.field];
      if (!field) {
        throw new errors.ES_UNSUPPORTED_QUERY(
          `${node.field}: (substring of the whole ${node.field === 'text' ? 'message' : 'body'}) is answered by backend=pg only`,
        );
      }
      return {
        wildcard: {
          [field]: { value: `*${wildcardEscape(node.value)}*`, case_insensitive: true },
        },
      };
    }
    case 'flag': {
      const q = { term: { flags: node.flag } };
      return node.negate === true ? { bool: { must_not: [q] } } : q;
    }
    case 'hasAttachment':
      return { term: { has_attachments: true } };
    case 'date': {
      const start = `${node.value}T00:00:00.000Z`;
      if (node.op === 'before') return { range: { date: { lt: start } } };
      if (node.op === 'after') return { range: { date: { gte: start } } };
      const end = new Date(Date.parse(start) + 86400000).toISOString();
      return { range: { date: { gte: start, lt: end } } };
    }
    case 'size':
      return { range: { size: node.op === 'larger' ? { gt: node.value } : { lt: node.value } } };
    case 'mailbox':
      return { term: { mailbox: node.value } };
    /* istanbul ignore next: validate() has rejected every other type */
    default:
      throw new TypeError(`compileEs: unknown node type ${node.type}`);
  }
}

module.exports = { compileEs, wildcardEscape };
