'use strict';

const { errors } = require('@mailgate/core');
const { MAX_TOKEN_CHARS } = require('./words');

/*
 * Index layout: ONE INDEX PER USER behind a per-user alias.
 *
 *   alias  <prefix>-u<userId>           → index <prefix>-u<userId>-g<generation>
 *   alias  <prefix>-next-u<userId>      → the index a running `es reindex` is building
 *
 * Why per user, not a shared index with routing: this mirror has no delete_by_query and no
 * _reindex (not on stock-minimal nodes, see packages/es/README.md), so every operation that
 * touches "all of a user's documents" — rebuild, drop a user, move a big user — must be an
 * index-level operation to stay cheap: a per-user index is rebuilt and swapped by alias, and
 * dropped with one DELETE. It also mirrors the per-user partitions of PostgreSQL: a search
 * only ever opens that user's index (isolation by construction, plus a user_id filter).
 * Scaling: one primary shard per user; shards spread over nodes automatically. The cost is
 * shard count (ES's default cap is 1000 shards per node); past a few thousand users per node
 * the same alias layer lets small users share an index (alias with `filter: {term: user_id}`
 * and `routing: userId`) without changing readers or writers, which only ever name the alias.
 */

/*
 * Version of MAPPINGS + settings().analysis, stored in the index's mapping `_meta`. Bump it
 * with any change that needs documents re-analysed: an index of an older version is rebuilt
 * by `es reindex`, and by the worker of `mailgate serve` when it starts (upgradeIndexes).
 *   1  standard analyzer on subject/from/to/cc/body copied into `words`
 *   2  `words` holds PostgreSQL's lexemes (words.js); `body` is no longer indexed
 */
const MAPPING_VERSION = 2;

const KEYWORD = { type: 'keyword', ignore_above: 8191 };
// Lucene refuses terms over 32766 bytes; 8191 chars stays under that whatever the UTF-8 width.
const TEXT = { type: 'text', analyzer: 'standard' };
// Whole header values for IMAP substring search (wildcard). toDoc() leaves them out when
// their UTF-8 form exceeds Lucene's 32766-byte term limit, so the cap is in bytes, not chars.
const RAW = { type: 'keyword', ignore_above: 32766 };

/**
 * Mappings: the standard tokenizer only (core ES), so they work on any stock ES 8/9 node,
 * including one without the analysis-common module.
 */
const MAPPINGS = Object.freeze({
  dynamic: 'strict',
  _meta: { mailgate_mapping_version: MAPPING_VERSION },
  // `words` can be long and is rebuilt from PostgreSQL by `es reindex`: not kept in _source.
  _source: { excludes: ['words'] },
  properties: {
    user_id: { type: 'integer' },
    mailbox_id: { type: 'integer' },
    mailbox: KEYWORD,
    uid: { type: 'long' },
    modseq: { type: 'long' },
    subject: TEXT,
    subject_raw: RAW,
    from_name: { type: 'text', analyzer: 'standard' },
    from: KEYWORD,
    from_text: TEXT,
    from_raw: RAW,
    to: KEYWORD,
    to_text: TEXT,
    to_raw: RAW,
    cc: KEYWORD,
    cc_text: TEXT,
    cc_raw: RAW,
    // Word search: the lexemes of the message's tsvector (subject, From/To/Cc, first 200,000
    // body characters), in PostgreSQL's positions, one token each (words.js).
    words: { type: 'text', analyzer: 'mailgate_lexemes' },
    message_id: KEYWORD,
    date: { type: 'date' },
    internal_date: { type: 'date' },
    size: { type: 'integer' },
    flags: KEYWORD,
    keywords: KEYWORD,
    has_attachments: { type: 'boolean' },
  },
});

/**
 * Index settings. auto_expand_replicas keeps a single node green and gives one replica as
 * soon as a second node joins. gc_deletes is raised from 60 s so that a delete tombstone
 * (external versions) outlives any in-flight reindex page that read the row before it was
 * expunged.
 * @param {{building?: boolean}} [opts] building: refresh disabled (bulk loads)
 */
function settings(opts = {}) {
  return {
    number_of_shards: 1,
    auto_expand_replicas: '0-1',
    'index.gc_deletes': '10m',
    refresh_interval: opts.building ? '-1' : '1s',
    analysis: {
      tokenizer: { mailgate_lexeme: { type: 'standard', max_token_length: MAX_TOKEN_CHARS } },
      analyzer: { mailgate_lexemes: { type: 'custom', tokenizer: 'mailgate_lexeme' } },
    },
  };
}

const PREFIX_RE = /^[a-z0-9][a-z0-9_-]{0,60}$/;

/**
 * Index/alias name prefix: MAILGATE_ES_PREFIX (default `mailgate`), so several installations
 * or test files can share one cluster.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string}
 */
function prefixFrom(env = process.env) {
  const p = env.MAILGATE_ES_PREFIX || 'mailgate';
  if (!PREFIX_RE.test(p)) {
    throw new errors.CONFIG_INVALID(
      'MAILGATE_ES_PREFIX must be 1-61 characters from a-z 0-9 _ - (lower case)',
    );
  }
  return p;
}

/**
 * Names for one user.
 * @param {string} prefix
 * @param {number} userId
 */
function namesFor(prefix, userId) {
  const id = Number(userId);
  return {
    alias: `${prefix}-u${id}`,
    next: `${prefix}-next-u${id}`,
    index: (gen) => `${prefix}-u${id}-g${gen}`,
  };
}

/** Document id inside a user's index. */
function docId(mailboxId, uid) {
  return `${mailboxId}:${uid}`;
}

module.exports = { MAPPINGS, MAPPING_VERSION, settings, prefixFrom, namesFor, docId };
