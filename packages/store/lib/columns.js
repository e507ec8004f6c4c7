'use strict';

/*
 * The column lists of the tables the store writes in bulk (COPY in commitBatch, the one-statement
 * append, COPY/MOVE): one place, so a new column is added once. A leaf: requires nothing.
 */

/** Columns of `messages` in COPY order. */
const MESSAGE_COLUMNS = [
  'user_id',
  'mailbox_id',
  'uid',
  'modseq',
  'content_hash',
  'dup_index',
  'internal_date',
  'date',
  'from_name',
  'from_addr',
  'from_text',
  'to_addrs',
  'to_text',
  'cc_addrs',
  'cc_text',
  'subject',
  'message_id',
  'in_reply_to',
  'refs',
  'size',
  'flags',
  'keywords',
  'has_attachments',
  'header_text',
  'body_text',
  'source_name',
  'preview',
  'thread_id',
];
/** Columns of `message_sources` (the raw bytes in their stored form, raw-codec.js, and the mbox framing). */
const SOURCE_COLUMNS = [
  'user_id',
  'mailbox_id',
  'uid',
  'raw',
  'raw_codec',
  'mbox_from_line',
  'mbox_variant',
  'mbox_trailer',
  'mbox_original',
  'source_meta',
];
/** Columns of `quarantine` (entries an import could not store). */
const QUARANTINE_COLUMNS = [
  'user_id',
  'mailbox',
  'source',
  'position',
  'reason',
  'detail',
  'raw',
  'content_hash',
];

/**
 * Columns of `message_imap` (the IMAP metadata derived at import or delivery, @mailgate/mime
 * imap-meta.js), in COPY order; the row's `imap` object holds size and the values.
 */
const IMAP_COLUMNS = ['user_id', 'mailbox_id', 'uid', 'size', 'envelope', 'body', 'bodystructure'];

/**
 * Columns of `message_imap_lines` (the list-view header lines, the `imap` object's `fields`, in
 * a narrow table of their own: migrations/20261203210100_message_imap_lines.js), in COPY order.
 */
const IMAP_LINES_COLUMNS = ['user_id', 'mailbox_id', 'uid', 'size', 'fields'];

module.exports = {
  MESSAGE_COLUMNS,
  SOURCE_COLUMNS,
  QUARANTINE_COLUMNS,
  IMAP_COLUMNS,
  IMAP_LINES_COLUMNS,
};
