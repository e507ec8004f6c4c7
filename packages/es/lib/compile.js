'use strict';

const { errors } = require('@mailgate/core');
const { validate } = require('@mailgate/query');

/*
 * The query-language AST (@mailgate/query) compiled to an Elasticsearch query. Everything runs
 * in filter context: results are a set (sorted by mailbox and uid like the pg backend), never
 * ranked, so no scoring work is done.
 *
 * Semantics per node, and where ES differs from PostgreSQL (README "Operators on ES"):
 * - word / phrase: `match` (all tokens) / `match_phrase` on `words` (subject, From/To/Cc text,
 *   body), standard analyzer: lower-cased, no stemming, no stop words — the same word search
 *   as pg's `simple` tsvector, except that the two tokenizers split e-mail addresses, host
 *   names and hyphenated words differently.
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
 * @param {object} [opts] reserved (same signature as compileSql)
 * @returns {object} ES query DSL
 * @throws {Error} INVALID_QUERY for a malformed AST, ES_UNSUPPORTED_QUERY for body:/text:
 */
function compileEs(ast, opts = {}) {
  void opts;
  try {
    validate(ast);
  } catch (err) {
    if (err.code === 'INVALID_QUERY') throw new errors.INVALID_QUERY(err.message);
    throw err;
  }
  return emit(ast);
}

function emit(node) {
  switch (node.type) {
    case 'all':
      return { match_all: {} };
    case 'and':
      return { bool: { filter: node.children.map(emit) } };
    case 'or':
      return { bool: { should: node.children.map(emit), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [emit(node.child)] } };
    case 'word':
      return { match: { words: { query: node.value, operator: 'and' } } };
    case 'phrase':
      return { match_phrase: { words: { query: node.value } } };
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
