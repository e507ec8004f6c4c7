'use strict';

/*
 * The header row: THE message shape of mailgate. Owns the one builder every path derives its
 * row from — the API's JSON row and NDJSON line, the ES document (@mailgate/es toDoc), the
 * file and upstream-IMAP backends of @mailgate/legacy — its list-row projection and the
 * snapshot packing of that, and the preview. Pure (no I/O, no SQL: the column lists that feed
 * these rows are the store's, @mailgate/store header-row.js). Must never grow a second copy of
 * the shape: add a field here and every path gets it.
 */

/** Longest preview kept (characters): a list row shows one line of it. */
const PREVIEW_CHARS = 160;

/**
 * The preview of a message body: its first words, without quoted text (`>` lines), the
 * "On … wrote:" line that introduces it, or the signature, whitespace collapsed.
 * @param {string|null|undefined} bodyText
 * @returns {string|null}
 */
function previewOf(bodyText) {
  if (!bodyText) return null;
  const lines = [];
  let length = 0;
  for (const line of String(bodyText).slice(0, 20000).split(/\r?\n/)) {
    const l = line.trim();
    if (l === '--' || l === '-- ') break;
    if (!l || l.startsWith('>') || /^(on .{1,200} wrote:|-+ ?original message ?-+)$/i.test(l)) {
      continue;
    }
    lines.push(l);
    length += l.length + 1;
    if (length > PREVIEW_CHARS) break;
  }
  const text = lines.join(' ').replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS - 1)}…` : text;
}

const iso = (d) => {
  if (d == null || d === '') return null;
  const t = d instanceof Date ? d : new Date(d);
  return Number.isNaN(t.getTime()) ? null : t.toISOString();
};

/**
 * Builds a header row from normalized fields. Every backend calls this (directly or through
 * headerRow) so the shape exists once.
 * @param {{uid: number, fromName?: string|null, fromAddr?: string|null, to?: object[], cc?: object[],
 *   subject?: string|null, date?: Date|string|null, internalDate?: Date|string|null, size: number,
 *   flags?: string[], keywords?: string[], hasAttachments?: boolean, messageId?: string|null,
 *   modseq?: number, preview?: string|null, threadId?: string|null}} f
 * @returns {{uid: number, from: {name: string, address: string}|null, to: object[], cc: object[],
 *   subject: string|null, date: string|null, internalDate: string|null, size: number, flags: string[],
 *   keywords: string[], hasAttachments: boolean, messageId: string|null, modseq: number,
 *   preview: string|null, threadId: string|null}}
 */
function buildHeaderRow(f) {
  return {
    uid: Number(f.uid),
    from: f.fromAddr || f.fromName ? { name: f.fromName || '', address: f.fromAddr || '' } : null,
    to: f.to || [],
    cc: f.cc || [],
    subject: f.subject ?? null,
    date: iso(f.date),
    internalDate: iso(f.internalDate),
    size: Number(f.size),
    flags: f.flags || [],
    keywords: f.keywords || [],
    hasAttachments: Boolean(f.hasAttachments),
    messageId: f.messageId ?? null,
    modseq: Number(f.modseq || 0),
    preview: f.preview ?? null,
    threadId: f.threadId ?? null,
  };
}

/**
 * Header row of a `messages` row (HEADER_COLUMNS, or the derived columns of an import).
 * @param {object} r
 */
function headerRow(r) {
  return buildHeaderRow({
    uid: r.uid,
    fromName: r.from_name,
    fromAddr: r.from_addr,
    to: typeof r.to_addrs === 'string' ? JSON.parse(r.to_addrs) : r.to_addrs,
    cc: typeof r.cc_addrs === 'string' ? JSON.parse(r.cc_addrs) : r.cc_addrs,
    subject: r.subject,
    date: r.date,
    internalDate: r.internal_date,
    size: r.size,
    flags: r.flags,
    keywords: r.keywords,
    hasAttachments: r.has_attachments,
    messageId: r.message_id,
    modseq: r.modseq,
    preview: r.preview,
    threadId: r.thread_id,
  });
}

/**
 * Header row of a message parsed by @mailgate/mime's parseMessage (the legacy backends).
 * @param {object|null} p parseMessage result, null when the message could not be parsed
 * @param {{uid: number, internalDate?: Date|string|null, size: number, flags?: string[], keywords?: string[], modseq?: number, hasAttachments?: boolean}} meta
 */
function headerRowFromParsed(p, meta) {
  const date = p && p.date && !Number.isNaN(p.date.getTime()) ? p.date : null;
  return buildHeaderRow({
    uid: meta.uid,
    fromName: p && p.from ? p.from.name : null,
    fromAddr: p && p.from ? p.from.address : null,
    to: p ? p.to : [],
    cc: p ? p.cc : [],
    subject: p ? p.subject : null,
    date,
    internalDate: meta.internalDate || date || new Date(0),
    size: meta.size,
    flags: meta.flags,
    keywords: meta.keywords,
    hasAttachments: meta.hasAttachments ?? Boolean(p && p.hasAttachments),
    messageId: p ? p.messageId : null,
    modseq: meta.modseq,
    preview: p ? previewOf(p.bodyText) : null,
  });
}

/**
 * The list view of a header row (issue 13): what a mail client's message list shows — uid,
 * flags and keywords, INTERNALDATE, the Date header, sender, subject, size, whether it has
 * attachments — and the modseq a client syncs by. No recipients, preview or thread: those are
 * what make a full row ~1 KB on a mailbox of mailing lists (Enron large: 21.6 MB of JSON for
 * 21,282 rows against 6 MB here). Always a projection of the full row, so the two never
 * disagree on a field they share.
 * @param {ReturnType<typeof buildHeaderRow>} h
 * @returns {{uid: number, from: {name: string, address: string}|null, subject: string|null,
 *   date: string|null, internalDate: string|null, size: number, flags: string[],
 *   keywords: string[], hasAttachments: boolean, modseq: number}}
 */
function listRowOf(h) {
  return {
    uid: h.uid,
    from: h.from,
    subject: h.subject,
    date: h.date,
    internalDate: h.internalDate,
    size: h.size,
    flags: h.flags,
    keywords: h.keywords,
    hasAttachments: h.hasAttachments,
    modseq: h.modseq,
  };
}

/**
 * The shape of listRowOf's rows as stored in list view snapshots (list_snapshots.format, see
 * list-cache.js): bump it whenever listRowOf's fields or listRow's values change, or a service
 * would serve rows of the old shape from a snapshot written before the change. Format 2 stores
 * each row as an array (packListRow), not an object: on Enron large 3.0 MB of JSON instead of
 * 5.6 MB (1.1 MB stored instead of 1.3), parsed and rebuilt into rows in ~12 ms instead of ~35
 * (a synthetic list of the same length, Node 20, one core); the first
 * open after a restart or an import reads and parses that one value.
 */
const LIST_FORMAT = 2;

/**
 * A list row as a snapshot stores it (LIST_FORMAT 2): its values in listRowOf's field order,
 * `from` as name and address, hasAttachments as 0/1.
 * @param {ReturnType<typeof listRowOf>} r
 * @returns {Array}
 */
function packListRow(r) {
  return [
    r.uid,
    r.from ? r.from.name : null,
    r.from ? r.from.address : null,
    r.subject,
    r.date,
    r.internalDate,
    r.size,
    r.flags,
    r.keywords,
    r.hasAttachments ? 1 : 0,
    r.modseq,
  ];
}

/**
 * The list row of a packed one (the inverse of packListRow); null for a value that is not a
 * packed row, so that a damaged snapshot is read by SQL instead.
 * @param {unknown} x
 */
function unpackListRow(x) {
  if (!Array.isArray(x) || x.length !== 11) return null;
  return {
    uid: x[0],
    from: x[1] === null && x[2] === null ? null : { name: x[1], address: x[2] },
    subject: x[3],
    date: x[4],
    internalDate: x[5],
    size: x[6],
    flags: x[7],
    keywords: x[8],
    hasAttachments: x[9] === 1,
    modseq: x[10],
  };
}

const jsonArray = (v) => (v == null || v === '[]' ? [] : JSON.parse(v));
const instant = (v) => (v == null ? null : iso(new Date(Number(v))));

/**
 * The list row of a LIST_COLUMNS row read with TEXT_TYPES: built field by field (it runs
 * 21,282 times in a cold list of the Enron mailbox), equal to listRowOf(buildHeaderRow(…)) of
 * the same message, which the list-cache tests check.
 * @param {Record<string, string|null>} x
 */
function listRow(x) {
  return {
    uid: Number(x.uid),
    from:
      x.from_addr || x.from_name ? { name: x.from_name || '', address: x.from_addr || '' } : null,
    subject: x.subject ?? null,
    date: instant(x.date_ms),
    internalDate: instant(x.internal_ms),
    size: Number(x.size),
    flags: jsonArray(x.flags),
    keywords: jsonArray(x.keywords),
    hasAttachments: x.has_attachments === 't' || x.has_attachments === true,
    modseq: Number(x.modseq || 0),
  };
}

module.exports = {
  LIST_FORMAT,
  PREVIEW_CHARS,
  packListRow,
  unpackListRow,
  listRow,
  listRowOf,
  buildHeaderRow,
  headerRow,
  headerRowFromParsed,
  previewOf,
};
