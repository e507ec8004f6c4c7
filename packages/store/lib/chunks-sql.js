'use strict';

const { likeEscape } = require('@mailgate/query');
const { checkedOwner } = require('./owner-sql');

/*
 * How a substring term over the header or body text (`text:`, `body:`: IMAP SEARCH TEXT/BODY)
 * is answered. Passed to @mailgate/query compileSql as its `substring` option. Owns that SQL;
 * never tokenizes a text itself (the insert trigger does, migrations/20261203310100_word_vocabulary.js,
 * which says why the answers are exact).
 *
 *  - A pattern of 3 or more ASCII letters and digits, over header and body (`text:`): the words
 *    of the user's vocabulary (message_vocab, trigram GIN) that contain it, then the messages
 *    whose vector (message_words, GIN) holds one of them, as a word or as a substring-only
 *    lexeme. No text is read, except the pieces of the few messages whose vector is marked
 *    partial (over its limits), LIKEd by primary key.
 *  - Any other pattern with such a run of 3 or more (`body:`, `foo.bar`, `john smith`, non-ASCII
 *    letters): the messages holding a word that contains each run (up to three, the longest),
 *    and the partial ones, each confirmed by LIKE on its own pieces (message_chunks: the
 *    lower-cased text in overlapping pieces, migrations/20261125220000_message_chunks.js).
 *  - A pattern without such a run, or whose every run is in more than VOCAB_CAP words (`e`,
 *    `the`): LIKE over the pieces of the mailbox.
 */

// The migrations' cut, repeated (a migration's text stays as it ran): a new piece every
// PIECE_STEP bytes, each PIECE_STEP + PIECE_OVERLAP bytes long, both ends moved forward to a
// character boundary. A pattern of up to EXACT_MAX bytes that occurs in a text lies whole
// inside one piece. The step was 1,700 until 20261130610100_compressed_pieces.js (pieces stored
// before keep that cut); the exactness depends on the overlap only, which never changed.
const PIECE_STEP = 3800;
const PIECE_OVERLAP = 250;
const EXACT_MAX = PIECE_OVERLAP + 1;

// Past this many vocabulary words a run narrows too little to be worth a query of that many
// lexemes: the pieces are read instead.
const VOCAB_CAP = 2000;
// The runs of a pattern that look up the vocabulary: what a trigram index can narrow (3 or
// more characters), and only ASCII letters and digits, which PostgreSQL's lower() (C locale)
// and JavaScript's toLowerCase agree on.
const RUN = /[a-z0-9]{3,}/g;
const MAX_RUNS = 3;

const KIND = Object.freeze({ header_text: 0, body_text: 1 });

/**
 * The `substring` option of compileSql for one user's search.
 * @param {number} userId the owner, bound: the subquery is then uncorrelated (see wordsIn)
 * @param {string} [mailboxColumn] a column the surrounding query equates with the message's
 *   mailbox (`b.id`): a term every hit must meet is then looked up in that one mailbox first
 * @param {{alone?: {answered: boolean}}} [opts] alone: as wordsIn's; a term answered exactly
 *   without its row (a pattern of 1 to EXACT_MAX bytes) becomes a bare `SELECT uid`, any other
 *   the usual test (and `alone.answered` stays unset)
 * @returns {Function} `({alias, columns, value, bind, top, columnsLike}) → SQL`
 */
function chunksIn(userId, mailboxColumn, opts = {}) {
  const owner = checkedOwner('chunksIn', userId, mailboxColumn, opts.alone);
  return ({ alias, columns, value, bind, top, columnsLike }) => {
    const kinds = columns.map((c) => KIND[c]);
    // An empty pattern matches every text, also an empty one (which has no pieces).
    if (value === '' || kinds.some((k) => k === undefined)) return columnsLike();
    // UTF-8 bytes, as the pieces are cut; a longer pattern probes with its longest prefix of
    // whole characters that fits.
    let probe = '';
    let bytes = 0;
    for (const ch of value) {
      bytes += Buffer.byteLength(ch, 'utf8');
      if (bytes > EXACT_MAX) break;
      probe += ch;
    }
    const runs = (value.match(RUN) || []).sort((a, b) => b.length - a.length).slice(0, MAX_RUNS);
    // Exact from the vectors: the pattern is one run, and both texts are searched (a vector
    // does not tell the header's words from the body's).
    const exact = runs.length === 1 && runs[0] === value && kinds.length === 2;
    const kind = kinds.length === 1 ? ` AND c.kind = ${kinds[0]}` : '';
    // The uids of the one mailbox (a term every hit meets, or the bare answer), or the
    // (mailbox, uid) pairs of the user.
    const inMailbox = Boolean(mailboxColumn) && Boolean(top || opts.alone);
    // Placeholders are positional: every bind() call is made where its placeholder stands.
    const u = () => bind(owner);
    const where = (t) =>
      inMailbox ? `${t}.mailbox_id = ${mailboxColumn}` : `${t}.mailbox_id IS NOT NULL`;
    const pieceLike = (t) =>
      `EXISTS (SELECT 1 FROM message_chunks c WHERE c.user_id = ${u()} ` +
      `AND c.mailbox_id = ${t}.mailbox_id AND c.uid = ${t}.uid${kind} ` +
      `AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)})`;
    const out = inMailbox || opts.alone ? 'uid' : 'mailbox_id, uid';
    let uids;
    if (!runs.length) {
      uids =
        `SELECT DISTINCT c.${out.replace(', ', ', c.')} FROM message_chunks c ` +
        `WHERE c.user_id = ${u()} AND ${where('c')}${kind} ` +
        `AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)}`;
    } else {
      // The runs' query once (a materialized CTE read by InitPlans): NULL when every run is in
      // too many words.
      let q = null;
      for (const r of runs) {
        const one =
          `mailgate_vocab_query(ARRAY(SELECT DISTINCT v.word FROM message_vocab v WHERE v.user_id = ${u()} ` +
          `AND v.word LIKE ${bind(`%${r}%`)} LIMIT ${VOCAB_CAP + 1}), ${VOCAB_CAP})`;
        q = q ? `mailgate_tsquery_and(${q}, ${one})` : one;
      }
      const w = `w.${out.replace(', ', ', w.')}`;
      const c = `c.${out.replace(', ', ', c.')}`;
      uids = `WITH q AS MATERIALIZED (SELECT ${q} AS q) `;
      if (exact) {
        // Every vector that is not partial and holds a run containing the pattern is a hit
        // (migrations/20261203310200_vocab_text_only.js); the partial ones are read.
        uids +=
          `SELECT ${w} FROM message_words w WHERE w.user_id = ${u()} AND ${where('w')} ` +
          `AND w.tsv @@ ((SELECT q FROM q) && !! mailgate_partial()) UNION ` +
          `SELECT ${w} FROM message_words w WHERE w.user_id = ${u()} AND ${where('w')} ` +
          `AND w.tsv @@ mailgate_partial() AND ${pieceLike('w')} UNION `;
      } else {
        uids +=
          `SELECT ${w} FROM message_words w WHERE w.user_id = ${u()} AND ${where('w')} ` +
          `AND w.tsv @@ ((SELECT q FROM q) || mailgate_partial()) AND ${pieceLike('w')} UNION `;
      }
      uids +=
        `SELECT DISTINCT ${c} FROM message_chunks c WHERE (SELECT q FROM q) IS NULL ` +
        `AND c.user_id = ${u()} AND ${where('c')}${kind} ` +
        `AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)}`;
    }
    if (opts.alone && probe === value) {
      opts.alone.answered = true;
      return uids;
    }
    // The uids first, then messages probed by primary key (as wordsIn, same measurements).
    const sql = inMailbox
      ? `${alias}.uid = ANY(ARRAY(${uids}))`
      : `(${alias}.mailbox_id, ${alias}.uid) IN (${uids})`;
    if (probe === value) return sql;
    // A longer pattern: its prefix finds the candidates (every text that holds the pattern
    // holds it), the full text decides: reassembled from the pieces, the one place it is kept
    // (migrations/20261130610200_text_in_pieces_only.js), tested after the probe's test.
    // Bound in text order: the owner inside textOf's subquery, then the pattern.
    const whole = kinds.map(
      (k) => `${textOf(alias, k, bind(owner))} LIKE ${bind(`%${likeEscape(value)}%`)}`,
    );
    return `(${sql} AND ${whole.length === 1 ? whole[0] : `(${whole.join(' OR ')})`})`;
  };
}

/**
 * A message's whole header (kind 0) or body (kind 1) text, read back from its pieces, the one
 * place it is kept (migrations/20261130610200_text_in_pieces_only.js): the statement reads the
 * pieces of the row `alias` itself and the pure mailgate_join_pieces joins them
 * (migrations/20261130610300_join_pieces.js). Not a function that reads the table: on Citus
 * the statement runs on the user's shard, where such a function is refused; and the user is
 * named by the statement's own user id, not by the row's column: Citus routes a subquery to
 * the statement's shard only when its distribution column is that value ("complex joins"
 * otherwise).
 * @param {string} alias a `messages` row's alias in the surrounding statement (our constant)
 * @param {0|1} kind
 * @param {string} user the user's id in the statement: a placeholder bound to it (`?`), or an
 *   integer literal
 * @returns {string} an SQL expression of type text ('' for a text without pieces)
 */
function textOf(alias, kind, user) {
  if (kind !== 0 && kind !== 1) throw new TypeError('textOf: kind is 0 or 1');
  if (user !== '?' && !/^[0-9]+$/.test(String(user))) {
    throw new TypeError('textOf: user is a placeholder or an integer');
  }
  return (
    `mailgate_join_pieces(ARRAY(SELECT p.t FROM message_chunks p WHERE p.user_id = ${user} ` +
    `AND p.mailbox_id = ${alias}.mailbox_id AND p.uid = ${alias}.uid AND p.kind = ${kind} ORDER BY p.seq))`
  );
}

module.exports = { chunksIn, textOf, PIECE_STEP, PIECE_OVERLAP, EXACT_MAX, VOCAB_CAP };
