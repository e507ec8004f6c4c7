'use strict';

/*
 * The SQL side of the header row: the column lists a header row and a list row are read from,
 * and the NDJSON line of a header row. The rows themselves (their one shape, the list projection,
 * the preview) are the message model's, @mailgate/model, re-exported here for the store's own
 * modules and the service.
 */

const model = require('@mailgate/model');

/** Columns a header row is built from (alias `m` = messages), the only copy of this list. */
const HEADER_COLUMNS = `m.uid, m.mailbox_id, m.from_name, m.from_addr, m.to_addrs, m.cc_addrs,
  m.subject, m.date, m.internal_date, m.size, m.flags, m.keywords, m.has_attachments,
  m.message_id, m.modseq, m.preview, m.thread_id`;

/**
 * The NDJSON line of a header row (JSON and a newline): the one builder of both NDJSON paths,
 * the list cache's (list-cache.js lineOf) and the cold cursor's (mail-ops.js
 * streamHeadersNdjson), so the two answers are the same bytes.
 * @param {object} row a header row (headerRow)
 * @returns {string}
 */
const ndjsonLine = (row) => JSON.stringify(row) + '\n';

/**
 * Columns a list row is built from (alias `m`), read with TEXT_TYPES: node-postgres's own
 * parsers (a regex per timestamp, a parser per array, one call per column) cost more than
 * PostgreSQL's whole scan here, so the columns come as PostgreSQL's text and listRow turns
 * them into the row with little work: arrays as JSON, instants as epoch milliseconds (exact:
 * extract() is numeric since PostgreSQL 14; floor() truncates to the millisecond as the
 * driver's parse does).
 */
const LIST_COLUMNS = `m.uid, array_to_json(m.flags) AS flags, array_to_json(m.keywords) AS keywords,
  floor(extract(epoch FROM m.internal_date) * 1000) AS internal_ms,
  floor(extract(epoch FROM m.date) * 1000) AS date_ms, m.from_name, m.from_addr, m.subject,
  m.size, m.has_attachments, m.modseq`;

/** node-postgres query option: every column as PostgreSQL's text output (listRow parses). */
const TEXT_TYPES = Object.freeze({ getTypeParser: () => (v) => v });

module.exports = {
  ...model,
  HEADER_COLUMNS,
  ndjsonLine,
  LIST_COLUMNS,
  TEXT_TYPES,
};
