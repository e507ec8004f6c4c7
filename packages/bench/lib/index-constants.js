'use strict';

// Names the CLI needs without loading the backends (and their dependencies) at start-up.
const { SIZES } = require('./mailboxes');

const ALL_BACKENDS = [
  'pg',
  'es',
  'mbox',
  'maildir',
  'dovecot-mbox',
  'dovecot-maildir',
  // Dovecot on the Maildir with its full-text index (fts-xapian), built before timing
  'dovecot-maildir-fts',
  // mailgate's own IMAP server on pg (the imap door, same raw client as Dovecot)
  'mailgate-imap',
  // pg and es reached through the webmail HTTP API (`--via api`)
  'pg-api',
  'es-api',
  // pg on a Citus coordinator (MAILGATE_BENCH_CITUS_URL) beside pg on DATABASE_URL (issue 34.7)
  'pg-citus',
];

module.exports = { SIZES, ALL_BACKENDS };
