'use strict';

const { parseMessage } = require('@mailgate/mime');
const { parse, QueryError } = require('@mailgate/query');
const { errors } = require('@mailgate/core');
const { headerRowFromParsed } = require('@mailgate/model');

/**
 * Derives, from one message's raw bytes, what the file backends need: the header row (built
 * by @mailgate/store's one builder) and the in-memory message compilePredicate() tests.
 * The same parser as the importer (@mailgate/mime), so every backend sees the same fields.
 *
 * @param {Buffer} raw
 * @param {{uid: number, mailbox: string, flags: string[], keywords: string[], internalDate: Date|null, size?: number}} meta
 * @returns {{header: object, msg: object}}
 */
function describe(raw, meta) {
  let p;
  try {
    p = parseMessage(raw);
  } catch {
    p = null; // an unparsable message still has a uid, flags and a size
  }
  const size = meta.size ?? raw.length;
  const header = headerRowFromParsed(p, { ...meta, size, modseq: 0 });
  const date = header.date ? new Date(header.date) : null;
  const msg = p
    ? {
        fromText: p.fromText || '',
        toText: p.toText || '',
        ccText: p.ccText || '',
        subject: p.subject,
        // The importer's reading (derive.js), so every backend answers BODY/TEXT alike.
        headerText: (p.headerText || '') + (p.partHeaderText || ''),
        bodyText: p.searchBodyText ?? p.bodyText ?? '',
        date,
        size,
        flags: meta.flags,
        hasAttachments: Boolean(p.hasAttachments),
        mailbox: meta.mailbox,
      }
    : { date: null, size, flags: meta.flags, mailbox: meta.mailbox };
  return { header, msg };
}

/**
 * Query text or AST → AST; query-language errors become the catalogue's INVALID_QUERY.
 * @param {string|object} query
 */
function toAst(query) {
  if (query && typeof query === 'object') return query;
  try {
    return parse(query || '');
  } catch (err) {
    if (err instanceof QueryError || err.code === 'INVALID_QUERY') {
      throw new errors.INVALID_QUERY(err.message);
    }
    throw err;
  }
}

/** `current` plus `add` minus `remove`, deduplicated and sorted (the pg store's order). */
function applyChange(current, add, remove) {
  const s = new Set(current);
  for (const f of add) s.add(f);
  for (const f of remove) s.delete(f);
  return [...s].sort();
}

function sameSet(a, b) {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/**
 * Keyset paging over rows already in memory, in the pg store's scanPage() shape.
 * @param {object[]} rows header rows
 * @param {{limit: number, order?: 'uid'|'date', desc?: boolean, after?: {uid: number, date?: string}|null}} opts
 */
function pageRows(rows, opts) {
  const sortDate = (r) => r.date || r.internalDate;
  const cmp =
    opts.order === 'date'
      ? (a, b) => (sortDate(a) < sortDate(b) ? -1 : sortDate(a) > sortDate(b) ? 1 : a.uid - b.uid)
      : (a, b) => a.uid - b.uid;
  const sorted = [...rows].sort(opts.desc ? (a, b) => cmp(b, a) : cmp);
  let start = 0;
  if (opts.after) {
    // Cursors carry microseconds (the pg store's precision); rows here have milliseconds.
    const d = opts.after.date ? opts.after.date.replace(/(\.\d{3})\d*Z$/, '$1Z') : undefined;
    const pos = { uid: opts.after.uid, date: d, internalDate: d };
    start = sorted.findIndex((r) => (opts.desc ? cmp(pos, r) > 0 : cmp(r, pos) > 0));
    if (start < 0) start = sorted.length;
  }
  const page = sorted.slice(start, start + opts.limit);
  const more = start + opts.limit < sorted.length;
  const last = page[page.length - 1];
  const micro = (iso) => iso.replace(/(\.\d{3})Z$/, '$1000Z');
  return { rows: page, next: more ? { uid: last.uid, date: micro(sortDate(last)) } : null };
}

module.exports = { describe, toAst, applyChange, sameSet, pageRows };
