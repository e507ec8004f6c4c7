'use strict';

const { QueryError } = require('./errors');
const { validate } = require('./ast');
const { OPERATORS } = require('./parse');

const FLAG_WORDS = {
  '\\Seen': 'read',
  '\\Flagged': 'flagged',
  '\\Deleted': 'deleted',
  '\\Answered': 'answered',
  '\\Draft': 'draft',
};
const NEGATED_FLAG_WORDS = { '\\Seen': 'unread', '\\Flagged': 'unflagged' };

const BARE_VALUE_RE = /^[^\s()"]+$/;

/**
 * Print an AST as a canonical query string: parse(toString(ast)) deep-equals ast for every
 * AST that parse() returns. Hand-built ASTs print too, except a `word` whose value cannot be
 * written bare (whitespace, quotes, parentheses, a leading '-', `OR`, a known `name:` prefix)
 * and an `all` node nested inside and/or/not: those throw QueryError.
 * @param {object} ast
 * @returns {string}
 */
function toString(ast) {
  validate(ast);
  if (ast.type === 'all') return '';
  return print(ast);
}

function quote(value) {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function printValue(value) {
  return BARE_VALUE_RE.test(value) ? value : quote(value);
}

function printWord(value) {
  const op = /^([A-Za-z]+):/.exec(value);
  if (
    !BARE_VALUE_RE.test(value) ||
    value.startsWith('-') ||
    value === 'OR' ||
    (op && OPERATORS.has(op[1].toLowerCase()))
  ) {
    throw new QueryError(`word '${value}' cannot be written as a bare word`);
  }
  return value;
}

function printSize(bytes) {
  if (bytes > 0 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)}M`;
  if (bytes > 0 && bytes % 1024 === 0) return `${bytes / 1024}k`;
  return String(bytes);
}

function print(node) {
  switch (node.type) {
    case 'and':
      return node.children.map((c) => (c.type === 'or' ? `(${print(c)})` : print(c))).join(' ');
    case 'or':
      // Parentheses around an AND inside an OR are not needed (AND binds tighter) but make
      // the precedence visible to whoever reads the printed query.
      return node.children.map((c) => (c.type === 'and' ? `(${print(c)})` : print(c))).join(' OR ');
    case 'not': {
      const c = node.child;
      if (c.type === 'flag' && !c.negate && NEGATED_FLAG_WORDS[c.flag]) {
        return `is:${NEGATED_FLAG_WORDS[c.flag]}`;
      }
      return c.type === 'and' || c.type === 'or' ? `-(${print(c)})` : `-${print(c)}`;
    }
    case 'word':
      return printWord(node.value);
    case 'phrase':
      return quote(node.value);
    case 'substring':
      return `${node.field}:${printValue(node.value)}`;
    case 'flag': {
      if (node.negate === true) return print({ type: 'not', child: { ...node, negate: false } });
      return `is:${FLAG_WORDS[node.flag]}`;
    }
    case 'hasAttachment':
      return 'has:attachment';
    case 'date':
      return `${node.op}:${node.value}`;
    case 'size':
      return `${node.op}:${printSize(node.value)}`;
    case 'mailbox':
      return `in:${printValue(node.value)}`;
    case 'all':
      throw new QueryError("an 'all' node can only be printed at the top level");
    /* istanbul ignore next: validate() has rejected every other type */
    default:
      throw new QueryError(`unknown AST node type '${node.type}'`);
  }
}

module.exports = { toString };
