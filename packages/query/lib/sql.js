'use strict';

const { validate } = require('./ast');

// The only identifiers that ever reach the SQL text. User values are always bindings.
const SUBSTRING_COLUMNS = Object.freeze({
  from: ['from_text'],
  to: ['to_text'],
  cc: ['cc_text'],
  subject: ['subject'],
  body: ['body_text'],
  // RFC 3501 TEXT: the header or the body. The body first: a GIN recheck evaluates the OR in
  // this order and stops at the first match, and a word a user searches for is far more often
  // in a body than in a header, so most matching rows never read their header text out of
  // TOAST (Enron large, `text:would`: 42-46 ms against 66-69 warm, 142-177 against 179-206
  // cold under EXPLAIN ANALYZE).
  text: ['body_text', 'header_text'],
});

// Columns stored lower-cased at import (@mailgate/importer derive.js): matched with LIKE and a
// lower-cased pattern — the same answer as ILIKE (which lower-cases both sides), much cheaper.
const LOWERCASED_COLUMNS = new Set(['header_text', 'body_text']);

const IDENT_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const QUALIFIED_IDENT_RE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/**
 * Escape the LIKE/ILIKE metacharacters (`\`, `%`, `_`) with a backslash, PostgreSQL's default
 * LIKE escape character, so the result matches the text literally.
 * @param {string} s
 * @returns {string}
 */
function likeEscape(s) {
  return String(s).replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Compile an AST into a PostgreSQL WHERE-clause fragment over the `messages` table, with knex
 * raw `?` placeholders. Every user value is a binding; identifiers come from a fixed map.
 * The fragment is TRUE exactly for the rows compilePredicate() accepts (NULL counts as "no").
 * @param {object} ast a query AST (validated here)
 * @param {object} [opts]
 * @param {string} [opts.alias='m'] alias of the messages table in the surrounding query
 * @param {number|string} [opts.userId] owner of the mailboxes; required when the AST has `in:`
 * @param {string} [opts.mailboxesTable='mailboxes'] mailboxes table, optionally schema-qualified
 * @param {Function} [opts.words] how a word or phrase term matches, for a schema that keeps
 *   the tsvector elsewhere: `({alias, tsquery, bind, top, phrase, value}) → SQL`. `tsquery()`
 *   binds the term and returns its tsquery expression, `bind(v)` binds another value
 *   (placeholders are positional: bind in text order), `top` is true when every hit must meet
 *   the term (the query itself, or an AND term at its root), `phrase` is true for a "phrase"
 *   (phraseto_tsquery) and `value` is the term's text, for a schema that answers phrases
 *   another way than by the vector's positions. Default: `alias.tsv @@ tsquery()`.
 * @param {Function} [opts.substring] how a substring term over the lower-cased header/body
 *   text (`body:`, `text:`) matches, for a schema that keeps a searchable copy of that text
 *   elsewhere: `({alias, field, columns, value, bind, top, columnsLike}) → SQL`. `value` is
 *   the term lower-cased, `columns` the messages columns it searches, `columnsLike()` binds
 *   and returns the default `column LIKE '%value%'` test over them (exact; for the cases the
 *   copy cannot answer alone). Default: that test.
 * @returns {{ sql: string, bindings: any[] }}
 * @throws {QueryError} for a malformed AST; TypeError for bad options
 */
function compileSql(ast, opts = {}) {
  validate(ast);
  const alias = opts.alias === undefined ? 'm' : opts.alias;
  if (typeof alias !== 'string' || !IDENT_RE.test(alias)) {
    throw new TypeError(`compileSql: invalid alias ${JSON.stringify(alias)}`);
  }
  const mailboxesTable = opts.mailboxesTable === undefined ? 'mailboxes' : opts.mailboxesTable;
  if (typeof mailboxesTable !== 'string' || !QUALIFIED_IDENT_RE.test(mailboxesTable)) {
    throw new TypeError(`compileSql: invalid mailboxesTable ${JSON.stringify(mailboxesTable)}`);
  }
  if (opts.words !== undefined && typeof opts.words !== 'function') {
    throw new TypeError('compileSql: opts.words must be a function');
  }
  if (opts.substring !== undefined && typeof opts.substring !== 'function') {
    throw new TypeError('compileSql: opts.substring must be a function');
  }
  const bindings = [];
  const ctx = {
    alias,
    mailboxesTable,
    words: opts.words,
    substring: opts.substring,
    userId: opts.userId,
    bindings,
  };
  const sql = emit(ast, ctx, true);
  return { sql, bindings };
}

function col(ctx, name) {
  return `${ctx.alias}.${name}`;
}

/** A word or phrase term: the tsvector column, or the caller's opts.words. */
function words(ctx, fn, value, top) {
  const tsquery = () => `${fn}('simple', ${bind(ctx, value)})`;
  if (!ctx.words) return `${col(ctx, 'tsv')} @@ ${tsquery()}`;
  return ctx.words({
    alias: ctx.alias,
    tsquery,
    bind: (v) => bind(ctx, v),
    top,
    phrase: fn === 'phraseto_tsquery',
    value,
  });
}

/** A substring term: LIKE/ILIKE over its columns, or the caller's opts.substring. */
function substring(ctx, node, top) {
  const columns = SUBSTRING_COLUMNS[node.field];
  // The bare `column ILIKE '%…%'` form (no coalesce, no lower()) is what a pg_trgm GIN
  // index on the column can answer; NULL columns are handled by negate() instead.
  const columnsLike = () => {
    const pattern = `%${likeEscape(node.value)}%`;
    const parts = columns.map((c) =>
      LOWERCASED_COLUMNS.has(c)
        ? `${col(ctx, c)} LIKE ${bind(ctx, pattern.toLowerCase())}`
        : `${col(ctx, c)} ILIKE ${bind(ctx, pattern)}`,
    );
    return parts.length === 1 ? parts[0] : `(${parts.join(' OR ')})`;
  };
  if (!ctx.substring || !columns.every((c) => LOWERCASED_COLUMNS.has(c))) return columnsLike();
  return ctx.substring({
    alias: ctx.alias,
    field: node.field,
    columns: [...columns],
    value: String(node.value).toLowerCase(),
    bind: (v) => bind(ctx, v),
    top,
    columnsLike,
  });
}

function bind(ctx, value) {
  ctx.bindings.push(value);
  return '?';
}

// top: the node is the query or one of the AND terms at its root (every hit meets it).
function emit(node, ctx, top = false) {
  switch (node.type) {
    case 'all':
      return 'TRUE';
    case 'and':
    case 'or': {
      const op = node.type === 'and' ? ' AND ' : ' OR ';
      const inner = top && node.type === 'and';
      return `(${node.children.map((c) => emit(c, ctx, inner)).join(op)})`;
    }
    case 'not':
      if (node.child.type === 'date') return emitDate(node.child, ctx, true);
      return negate(emit(node.child, ctx));
    case 'word':
      return words(ctx, 'plainto_tsquery', node.value, top);
    case 'phrase':
      return words(ctx, 'phraseto_tsquery', node.value, top);
    case 'substring':
      return substring(ctx, node, top);
    case 'flag': {
      const sql = `${bind(ctx, node.flag)} = ANY(${col(ctx, 'flags')})`;
      return node.negate === true ? negate(sql) : sql;
    }
    case 'hasAttachment':
      return col(ctx, 'has_attachments');
    case 'date':
      return emitDate(node, ctx);
    case 'size':
      // ::bigint so a huge `larger:` is compared, not rejected as out of range for int4;
      // int4 > int8 is still in the btree integer opfamily, so an index on size applies.
      return `${col(ctx, 'size')} ${node.op === 'larger' ? '>' : '<'} ${bind(ctx, node.value)}::bigint`;
    case 'mailbox': {
      if (ctx.userId === undefined || ctx.userId === null) {
        throw new TypeError('compileSql: opts.userId is required for in:<mailbox>');
      }
      const u = bind(ctx, ctx.userId);
      const n = bind(ctx, node.value);
      return (
        `${col(ctx, 'mailbox_id')} IN ` +
        `(SELECT id FROM ${ctx.mailboxesTable} WHERE user_id = ${u} AND name = ${n})`
      );
    }
    /* istanbul ignore next: validate() has rejected every other type */
    default:
      throw new TypeError(`compileSql: unknown node type ${node.type}`);
  }
}

/*
 * `NOT x` is NULL when x is NULL (a NULL subject, a NULL date), which would drop those rows
 * from `-subject:foo` or `-before:D`. `IS NOT TRUE` maps NULL to "not matched" first, so
 * every compiled fragment is TRUE exactly when the in-memory predicate says true.
 */
function negate(sql) {
  return `((${sql}) IS NOT TRUE)`;
}

/**
 * A date term, or with `negated` its complement: the rows where it is not true, a NULL date
 * included (what negate() gives), written as ranges and `IS NULL`, which the date index
 * answers; `(date >= D) IS NOT TRUE` reads every row of the mailbox (IMAP SENT*'s candidates,
 * issue 35.2: a sequential scan of the wide messages rows per SEARCH).
 */
function emitDate(node, ctx, negated = false) {
  const date = col(ctx, 'date');
  // Explicit UTC instants (…Z), so the session TimeZone never shifts the day boundaries.
  const start = `${node.value}T00:00:00Z`;
  const at = () => `${bind(ctx, start)}::timestamptz`;
  // '24 hours', not '1 day': timestamptz + '1 day' follows the session's DST rules.
  const end = () => `${bind(ctx, start)}::timestamptz + interval '24 hours'`;
  if (!negated) {
    if (node.op === 'before') return `${date} < ${at()}`;
    if (node.op === 'after') return `${date} >= ${at()}`;
    return `(${date} >= ${at()} AND ${date} < ${end()})`;
  }
  if (node.op === 'before') return `(${date} >= ${at()} OR ${date} IS NULL)`;
  if (node.op === 'after') return `(${date} < ${at()} OR ${date} IS NULL)`;
  return `(${date} < ${at()} OR ${date} >= ${end()} OR ${date} IS NULL)`;
}

module.exports = { compileSql, likeEscape, SUBSTRING_COLUMNS };
