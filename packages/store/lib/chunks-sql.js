'use strict';

const { likeEscape } = require('@mailgate/query');
const { checkedOwner } = require('./owner-sql');

/*
 * How a substring term over the header or body text reads `message_chunks`: the lower-cased
 * text cut into overlapping pieces, trigram-indexed (migrations/20261125220000_message_chunks.js,
 * which says why). Passed to @mailgate/query compileSql as its `substring` option.
 */

// The migrations' cut, repeated (a migration's text stays as it ran): a new piece every
// PIECE_STEP bytes, each PIECE_STEP + PIECE_OVERLAP bytes long, both ends moved forward to a
// character boundary. A pattern of up to EXACT_MAX bytes that occurs in a text lies whole
// inside one piece. The step was 1,700 until 20261130610100_compressed_pieces.js (pieces stored
// before keep that cut); the exactness depends on the overlap only, which never changed.
const PIECE_STEP = 3800;
const PIECE_OVERLAP = 250;
const EXACT_MAX = PIECE_OVERLAP + 1;

const KIND = Object.freeze({ header_text: 0, body_text: 1 });

/**
 * The `substring` option of compileSql for one user's search.
 * @param {number} userId the owner, bound: the subquery is then uncorrelated (see wordsIn)
 * @param {string} [mailboxColumn] a column the surrounding query equates with the message's
 *   mailbox (`b.id`): a term every hit must meet is then looked up in that one mailbox first
 * @param {{alone?: {answered: boolean}}} [opts] alone: as wordsIn's; a term the pieces answer
 *   exactly (a pattern of 1 to EXACT_MAX bytes) becomes the bare `SELECT DISTINCT uid`, any
 *   other the usual test (and `alone.answered` stays unset)
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
    // Placeholders are positional: bound in text order.
    const u = bind(owner);
    // Both kinds: no test (there are only the two). A kind is our constant, not user input.
    const kind = kinds.length === 1 ? ` AND c.kind = ${kinds[0]}` : '';
    let sql;
    if (opts.alone && probe === value) {
      opts.alone.answered = true;
      return (
        `SELECT DISTINCT c.uid FROM message_chunks c WHERE c.user_id = ${u} ` +
        `AND c.mailbox_id = ${mailboxColumn}${kind} AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)}`
      );
    }
    if (top && mailboxColumn) {
      // The uids first, then messages probed by primary key (as wordsIn, same measurements).
      sql =
        `${alias}.uid = ANY(ARRAY(SELECT c.uid FROM message_chunks c WHERE c.user_id = ${u} ` +
        `AND c.mailbox_id = ${mailboxColumn}${kind} AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)}))`;
    } else {
      sql =
        `(${alias}.mailbox_id, ${alias}.uid) IN (SELECT c.mailbox_id, c.uid FROM message_chunks c ` +
        `WHERE c.user_id = ${u}${kind} AND c.t LIKE ${bind(`%${likeEscape(probe)}%`)})`;
    }
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

module.exports = { chunksIn, textOf, PIECE_STEP, PIECE_OVERLAP, EXACT_MAX };
