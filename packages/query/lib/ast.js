'use strict';

const { QueryError } = require('./errors');

/** Limits that keep hostile input a 400 instead of a stack overflow or a huge SQL statement. */
const LIMITS = Object.freeze({ maxLength: 2000, maxDepth: 50, maxTerms: 200 });

// Compilers accept hand-built ASTs (the IMAP layer builds them from SEARCH keys), which are
// not bound by the parser's nesting limit; this one only protects the recursion itself.
const MAX_AST_DEPTH = 500;

const SUBSTRING_FIELDS = Object.freeze(['from', 'to', 'cc', 'subject', 'body', 'text']);
const FLAGS = Object.freeze(['\\Seen', '\\Flagged', '\\Deleted', '\\Answered', '\\Draft']);
const DATE_OPS = Object.freeze(['before', 'after', 'on']);
const SIZE_OPS = Object.freeze(['larger', 'smaller']);

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Milliseconds since the epoch of D 00:00 UTC for a 'YYYY-MM-DD' string, or null when the
 * string is not a real calendar date (2024-02-30, month 13, year 0000).
 * @param {string} value
 * @returns {number|null}
 */
function dayStartMs(value) {
  const m = typeof value === 'string' ? DATE_RE.exec(value) : null;
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31) return null;
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) {
    return null;
  }
  return d.getTime();
}

function fail(problem) {
  throw new QueryError(problem);
}

function isNonEmptyString(v) {
  return typeof v === 'string' && v.trim() !== '' && !v.includes('\u0000');
}

/**
 * Check that a value is a well-formed query AST (the shapes documented in the README) and
 * return it. Every compiler calls this first, so a malformed hand-built AST becomes a
 * QueryError instead of wrong SQL or a TypeError deep inside a backend.
 * @param {object} ast
 * @returns {object} the same ast
 * @throws {QueryError}
 */
function validate(ast) {
  check(ast, 0);
  return ast;
}

function check(node, depth) {
  if (depth > MAX_AST_DEPTH) fail(`AST deeper than ${MAX_AST_DEPTH} levels`);
  if (!node || typeof node !== 'object') fail('AST node is not an object');
  switch (node.type) {
    case 'all':
    case 'hasAttachment':
      return;
    case 'and':
    case 'or':
      if (!Array.isArray(node.children) || node.children.length === 0) {
        fail(`'${node.type}' node needs a non-empty children array`);
      }
      for (const child of node.children) check(child, depth + 1);
      return;
    case 'not':
      check(node.child, depth + 1);
      return;
    case 'word':
    case 'phrase':
    case 'mailbox':
      if (!isNonEmptyString(node.value)) fail(`'${node.type}' node needs a non-empty value`);
      return;
    case 'substring':
      if (!SUBSTRING_FIELDS.includes(node.field)) fail(`unknown substring field '${node.field}'`);
      // Only the empty string is refused: a value of spaces is a legitimate IMAP search.
      if (typeof node.value !== 'string' || node.value === '' || node.value.includes('\u0000')) {
        fail(`'${node.field}' needs a non-empty value`);
      }
      return;
    case 'flag':
      if (!FLAGS.includes(node.flag)) fail(`unknown flag '${node.flag}'`);
      return;
    case 'date':
      if (!DATE_OPS.includes(node.op)) fail(`unknown date operator '${node.op}'`);
      if (dayStartMs(node.value) === null) fail(`invalid date '${node.value}'`);
      return;
    case 'size':
      if (!SIZE_OPS.includes(node.op)) fail(`unknown size operator '${node.op}'`);
      if (!Number.isSafeInteger(node.value) || node.value < 0) fail('invalid size');
      return;
    default:
      fail(`unknown AST node type '${node.type}'`);
  }
}

/**
 * Mailbox names an AST restricts to (`in:` nodes), so a backend can refuse names the user
 * does not have (INVALID_QUERY) instead of answering 0 hits.
 * @param {object} ast
 * @returns {Set<string>}
 */
function mailboxesIn(ast) {
  const out = new Set();
  const walk = (n) => {
    if (!n || typeof n !== 'object') return;
    if (n.type === 'mailbox') out.add(n.value);
    for (const c of n.children || []) walk(c);
    walk(n.child);
  };
  walk(ast);
  return out;
}

module.exports = {
  LIMITS,
  SUBSTRING_FIELDS,
  FLAGS,
  DATE_OPS,
  SIZE_OPS,
  dayStartMs,
  validate,
  mailboxesIn,
};
