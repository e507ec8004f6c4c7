'use strict';

const { QueryError } = require('./errors');
const { LIMITS, dayStartMs } = require('./ast');

const SUBSTRING_OPERATORS = new Set(['from', 'to', 'cc', 'subject', 'body', 'text']);
const OPERATORS = new Set([
  ...SUBSTRING_OPERATORS,
  'has',
  'is',
  'before',
  'after',
  'on',
  'larger',
  'smaller',
  'in',
]);

const SEEN = { type: 'flag', flag: '\\Seen' };
const FLAGGED = { type: 'flag', flag: '\\Flagged' };
const IS_VALUES = {
  read: () => ({ ...SEEN }),
  seen: () => ({ ...SEEN }),
  unread: () => ({ type: 'not', child: { ...SEEN } }),
  unseen: () => ({ type: 'not', child: { ...SEEN } }),
  flagged: () => ({ ...FLAGGED }),
  unflagged: () => ({ type: 'not', child: { ...FLAGGED } }),
  deleted: () => ({ type: 'flag', flag: '\\Deleted' }),
  answered: () => ({ type: 'flag', flag: '\\Answered' }),
  draft: () => ({ type: 'flag', flag: '\\Draft' }),
};

const SIZE_RE = /^(\d+)([kKmM]?)$/;
const SIZE_UNITS = { '': 1, k: 1024, K: 1024, m: 1024 * 1024, M: 1024 * 1024 };

// A bare run ends at whitespace, a parenthesis or a quote; everything else (colons, dots,
// dashes, @) stays inside, so `http://x`, `e-mail` and `a@b.org` are single words.
const BARE_STOP = /[\s()"]/;
const OPERATOR_PREFIX_RE = /^([A-Za-z]+):/;

/**
 * Parse a search query into an AST (see README for syntax and node shapes).
 * @param {string} q
 * @returns {object} AST; `{ type: 'all' }` for an empty or blank query
 * @throws {QueryError} for any malformed or over-limit query
 */
function parse(q) {
  if (typeof q !== 'string') throw new QueryError('query must be a string');
  if (q.length > LIMITS.maxLength) {
    throw new QueryError(`query longer than ${LIMITS.maxLength} characters`);
  }
  const nul = q.indexOf('\u0000');
  // PostgreSQL rejects NUL in text values; refuse it here so it is a 400, not a 500.
  if (nul !== -1) throw new QueryError('NUL character', nul);

  const tokens = lex(q);
  if (tokens.length === 0) return { type: 'all' };
  const parser = new Parser(tokens, q.length);
  const ast = parser.parseOr(0);
  const extra = parser.peek();
  if (extra.t === ')') throw new QueryError("unbalanced ')'", extra.pos);
  /* istanbul ignore next: parseOr only stops at ')' or the end */
  if (extra.t !== 'eof') throw new QueryError('unexpected token', extra.pos);
  return ast;
}

/* ---------- lexer ---------- */

function lex(q) {
  const tokens = [];
  let terms = 0;
  const term = (node, pos) => {
    terms += 1;
    if (terms > LIMITS.maxTerms) {
      throw new QueryError(`more than ${LIMITS.maxTerms} terms`, pos);
    }
    tokens.push({ t: 'term', node, pos });
  };

  let i = 0;
  while (i < q.length) {
    const c = q[i];
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '(' || c === ')') {
      tokens.push({ t: c, pos: i });
      i += 1;
    } else if (c === '-') {
      const next = q[i + 1];
      // `-` negates only when glued to what follows; a lone dash is almost surely a typo
      // and guessing would silently change the result set.
      if (next === undefined || /[\s)]/.test(next)) {
        throw new QueryError("'-' must be followed by a term", i);
      }
      tokens.push({ t: '-', pos: i });
      i += 1;
    } else if (c === '"') {
      const { value, end } = readQuoted(q, i);
      if (value.trim() === '') throw new QueryError('empty phrase', i);
      term({ type: 'phrase', value }, i);
      i = end;
    } else {
      let end = i;
      while (end < q.length && !BARE_STOP.test(q[end])) end += 1;
      const run = q.slice(i, end);
      const op = OPERATOR_PREFIX_RE.exec(run);
      const name = op && op[1].toLowerCase();
      if (run === 'OR') {
        tokens.push({ t: 'OR', pos: i });
        i = end;
      } else if (name && OPERATORS.has(name)) {
        let value = run.slice(op[0].length);
        const valuePos = i + op[0].length;
        if (value === '' && q[end] === '"') {
          const quoted = readQuoted(q, end);
          value = quoted.value;
          end = quoted.end;
        }
        if (value === '') throw new QueryError(`empty value for '${name}:'`, i);
        term(operatorNode(name, value, valuePos), i);
        i = end;
      } else if (name && op[1] === name && looksLikeOperator(run, op[0].length, q[end])) {
        // A lower-case `name:value` is someone using an operator: answering 0 hits for a
        // typo (`form:alice`) would read as "no such mail". URLs (http://) and subject
        // prefixes (Re:, Fwd:hello) stay words; "quote" a term to search for it literally.
        const known = [...OPERATORS].sort().join(', ');
        throw new QueryError(`unknown operator '${name}:' (known: ${known})`, i);
      } else {
        // Other `name:` prefixes (http://, Re:) are ordinary words, not errors.
        term({ type: 'word', value: run }, i);
        i = end;
      }
    }
  }
  return tokens;
}

/**
 * `name:value` or `name:"value"` (not `http://…`, not a bare `name:`): an operator use.
 * @param {string} run the bare run
 * @param {number} nameEnd length of `name:`
 * @param {string|undefined} next the character after the run
 */
function looksLikeOperator(run, nameEnd, next) {
  if (run.length === nameEnd) return next === '"';
  return run[nameEnd] !== '/';
}

/** Read a "quoted string" starting at q[start] === '"'; `\"` and `\\` are escapes. */
function readQuoted(q, start) {
  let value = '';
  let i = start + 1;
  while (i < q.length) {
    const c = q[i];
    if (c === '\\' && (q[i + 1] === '"' || q[i + 1] === '\\')) {
      value += q[i + 1];
      i += 2;
    } else if (c === '"') {
      return { value, end: i + 1 };
    } else {
      value += c;
      i += 1;
    }
  }
  throw new QueryError('unbalanced quote', start);
}

function operatorNode(name, value, pos) {
  if (SUBSTRING_OPERATORS.has(name)) return { type: 'substring', field: name, value };
  switch (name) {
    case 'has':
      if (value.toLowerCase() !== 'attachment') {
        throw new QueryError(`unknown value '${value}' for 'has:' (expected attachment)`, pos);
      }
      return { type: 'hasAttachment' };
    case 'is': {
      const key = value.toLowerCase();
      if (!Object.hasOwn(IS_VALUES, key)) {
        const known = Object.keys(IS_VALUES).join(', ');
        throw new QueryError(`unknown value '${value}' for 'is:' (expected one of ${known})`, pos);
      }
      return IS_VALUES[key]();
    }
    case 'before':
    case 'after':
    case 'on':
      if (dayStartMs(value) === null) {
        throw new QueryError(`invalid date '${value}' for '${name}:' (expected YYYY-MM-DD)`, pos);
      }
      return { type: 'date', op: name, value };
    case 'larger':
    case 'smaller': {
      const m = SIZE_RE.exec(value);
      const bytes = m ? Number(m[1]) * SIZE_UNITS[m[2]] : NaN;
      if (!Number.isSafeInteger(bytes)) {
        throw new QueryError(
          `invalid size '${value}' for '${name}:' (expected bytes, optionally with k or M)`,
          pos,
        );
      }
      return { type: 'size', op: name, value: bytes };
    }
    case 'in':
      if (value.trim() === '') throw new QueryError("empty value for 'in:'", pos);
      // IMAP: the name INBOX is case-insensitive, every other mailbox name is not; INBOX's
      // inferiors are stored under INBOX (the store's canonicalName).
      return { type: 'mailbox', value: value.replace(/^inbox(?=\/|$)/i, 'INBOX') };
    /* istanbul ignore next: OPERATORS and this switch list the same names */
    default:
      throw new QueryError(`unknown operator '${name}:'`, pos);
  }
}

/* ---------- parser ---------- */

/** Build an and/or node, flattening nested nodes of the same type and unwrapping singletons. */
function combine(type, items) {
  const children = [];
  for (const item of items) {
    if (item.type === type) children.push(...item.children);
    else children.push(item);
  }
  return children.length === 1 ? children[0] : { type, children };
}

class Parser {
  constructor(tokens, length) {
    this.tokens = tokens;
    this.i = 0;
    this.eof = { t: 'eof', pos: length };
  }

  peek() {
    return this.i < this.tokens.length ? this.tokens[this.i] : this.eof;
  }

  next() {
    const tok = this.peek();
    this.i += 1;
    return tok;
  }

  // or := and ('OR' and)*   — OR binds looser than the implicit AND of juxtaposition.
  parseOr(depth) {
    const items = [this.parseAnd(depth)];
    while (this.peek().t === 'OR') {
      const orTok = this.next();
      const after = this.peek().t;
      if (after === 'eof' || after === ')' || after === 'OR') {
        throw new QueryError("dangling 'OR' (needs a term on both sides)", orTok.pos);
      }
      items.push(this.parseAnd(depth));
    }
    return combine('or', items);
  }

  // and := unary+
  parseAnd(depth) {
    const items = [];
    for (;;) {
      const t = this.peek().t;
      if (t === 'eof' || t === ')' || t === 'OR') break;
      items.push(this.parseUnary(depth));
    }
    if (items.length === 0) {
      const tok = this.peek();
      if (tok.t === 'OR') {
        throw new QueryError("dangling 'OR' (needs a term on both sides)", tok.pos);
      }
      if (tok.t === ')') throw new QueryError("empty group or unbalanced ')'", tok.pos);
      /* istanbul ignore next: an empty query never reaches the parser */
      throw new QueryError('expected a term', tok.pos);
    }
    return combine('and', items);
  }

  // unary := '-' unary | '(' or ')' | term
  parseUnary(depth) {
    const tok = this.next();
    if (tok.t === '-') {
      this.enter(depth + 1, tok.pos);
      const t = this.peek().t;
      if (t === 'OR' || t === ')' || t === 'eof') {
        throw new QueryError("'-' must be followed by a term", tok.pos);
      }
      return { type: 'not', child: this.parseUnary(depth + 1) };
    }
    if (tok.t === '(') {
      this.enter(depth + 1, tok.pos);
      const inner = this.parseOr(depth + 1);
      const close = this.next();
      if (close.t !== ')') throw new QueryError("unbalanced '('", tok.pos);
      return inner;
    }
    /* istanbul ignore else: parseAnd only calls this on '-', '(' or a term */
    if (tok.t === 'term') return tok.node;
    /* istanbul ignore next */
    throw new QueryError('expected a term', tok.pos);
  }

  enter(depth, pos) {
    if (depth > LIMITS.maxDepth) {
      throw new QueryError(`nested deeper than ${LIMITS.maxDepth} levels`, pos);
    }
  }
}

module.exports = { parse, OPERATORS };
