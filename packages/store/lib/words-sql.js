'use strict';

const { likeEscape } = require('@mailgate/query');
const { checkedOwner } = require('./owner-sql');

/*
 * How a word or phrase term of a search reads the words, which live in `message_words` (same
 * key as messages; migrations/20261125190000_message_words.js). Passed to @mailgate/query
 * compileSql as its `words` option: the query package knows the query language, the store
 * knows where the words are. Owns the SQL of word and phrase terms; never tokenizes a
 * message's text itself (PostgreSQL's parser does, in the insert trigger).
 *
 * The stored vectors have no positions (issue 30.6, migrations/20261203240100_words_stripped.js):
 * a "phrase" is every one of its words in the vector (the GIN index) AND its words in order,
 * separated by non-word characters only, in the message's text: the body's compressed pieces,
 * which the trigram index narrows and PostgreSQL rechecks, or the subject and address text of
 * the row. See phraseConfirm for where this differs from phraseto_tsquery on positions.
 */

// A character that is not part of a word: PostgreSQL's [[:alnum:]] follows the database's
// LC_CTYPE as its text-search parser does (in the C locale both take ASCII letters and digits
// only as the word characters a pattern needs to tell apart).
const SEP = '[^[:alnum:]]';

/**
 * The `words` option of compileSql for one user's search.
 * @param {number} userId the owner, bound: the subquery is then uncorrelated, answered once
 *   from the GIN index (a semi-join at the root of a WHERE, a hashed set under OR or NOT)
 *   instead of once per row
 * @param {string} [mailboxColumn] a column the surrounding query equates with the message's
 *   mailbox (`b.id`): a term every hit must meet is then looked up in that one mailbox first
 * @param {{alone?: {answered: boolean}}} [opts] alone: for a query that is this one term and
 *   nothing else (the caller checks: the hook returns a whole `SELECT uid` over the side
 *   table, which is no condition and cannot stand under AND, OR or NOT); needs mailboxColumn;
 *   sets `alone.answered` (scan-ops search uses it while the mailbox holds no hidden row)
 * @returns {(t: {alias: string, tsquery: () => string, bind: (v: any) => string, top: boolean, phrase?: boolean, value?: string}) => string}
 */
function wordsIn(userId, mailboxColumn, opts = {}) {
  const owner = checkedOwner('wordsIn', userId, mailboxColumn, opts.alone);
  return ({ alias, tsquery, bind, top, phrase, value }) => {
    const patterns = phrase ? phrasePatterns(value) : null;
    // The words of the row `w` (placeholders are positional: each bound where it stands).
    const match = () => {
      if (!patterns) return `w.tsv @@ ${tsquery()}`;
      // Every word of the phrase present (stripped vectors hold no positions, on which
      // phraseto_tsquery's <-> never matches), then the order on the text.
      return (
        `w.tsv @@ plainto_tsquery('simple', ${bind(value)}) ` +
        `AND ${phraseConfirm(patterns, value, () => bind(owner), bind)}`
      );
    };
    // The owner's placeholder comes first in the text, so it is bound first.
    const u = bind(owner);
    if (opts.alone) {
      opts.alone.answered = true;
      return (
        `SELECT w.uid FROM message_words w WHERE w.user_id = ${u} ` +
        `AND w.mailbox_id = ${mailboxColumn} AND ${match()}`
      );
    }
    if (top && mailboxColumn) {
      // The uids first (an InitPlan over the GIN index, once per mailbox), then messages probed
      // by primary key. With the IN form below the planner joins the whole partition instead
      // (Enron large, `would`: 20 ms against 9 ms warm). Not under OR/NOT: there
      // `uid = ANY(array)` would scan the array for every row.
      return (
        `${alias}.uid = ANY(ARRAY(SELECT w.uid FROM message_words w WHERE w.user_id = ${u} ` +
        `AND w.mailbox_id = ${mailboxColumn} AND ${match()}))`
      );
    }
    return (
      `(${alias}.mailbox_id, ${alias}.uid) IN (SELECT w.mailbox_id, w.uid FROM message_words w ` +
      `WHERE w.user_id = ${u} AND ${match()})`
    );
  };
}

/**
 * The regular expressions that find a phrase in a text, from the phrase as typed: its words
 * are its runs of letters, digits and marks, lower-cased (a run holds no regex metacharacter),
 * joined by one or more non-word characters. Null when the phrase has fewer than two words
 * (its one word, or none, is answered by the vector alone, as phraseto_tsquery would).
 * @param {string} value
 * @returns {{like: string, loose: string, window: string, seek: string, at: string, header: string}|null}
 *   like: the words in order as a LIKE pattern (a byte scan, several times cheaper than a
 *   regular expression on a piece that lacks them: it goes first); loose: the words joined by
 *   non-word characters (what the trigram index narrows by; word boundaries are the parser's
 *   to decide, on the window); window: loose with the non-blank text around it, one capture
 *   group; seek: the text before the next occurrence, one capture group (anchored, shortest:
 *   it consumes no character of the occurrence, whose first word is matched and the rest only
 *   looked ahead at, so occurrences that overlap or share a run of non-blank text are each
 *   found); at: an occurrence at the start of the text and the non-blank text after it; header: loose, case-insensitive by character classes (the row's
 *   subject and addresses are not lower-cased, and `~*` folds only ASCII in the C locale)
 */
function phrasePatterns(value) {
  const words =
    String(value)
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) || [];
  if (words.length < 2) return null;
  const core = words.join(`${SEP}+`);
  const anyCase = words.map((w) => [...w].map(caseClass).join('')).join(`${SEP}+`);
  return {
    like: `%${words.map(likeEscape).join('%')}%`,
    loose: core,
    window: `([^[:space:]]*${core}[^[:space:]]*)`,
    seek: `^(.*?)${words[0]}(?=${SEP}+${words.slice(1).join(`${SEP}+`)})`,
    at: `^${core}[^[:space:]]*`,
    header: anyCase,
  };
}

/** One character as a bracket of its two cases, when it has exactly two one-character cases. */
function caseClass(ch) {
  const lo = ch.toLowerCase();
  const up = ch.toUpperCase();
  if (lo === up || [...lo].length !== 1 || [...up].length !== 1) return ch;
  return `[${lo}${up}]`;
}

/**
 * The phrase in the text of the message of the words row `w`, with phraseto_tsquery's own
 * semantics on the text around each occurrence, one of:
 *  - in a piece of its body (message_chunks kind 1): the loose pattern (what the trigram GIN
 *    can answer) finds the pieces, and each occurrence (every start of the words in order,
 *    overlapping ones too) with the non-blank text around it is given to the parser, whose
 *    positions there decide (a phrase inside an address, a path or a host is no phrase of
 *    words, as with the stored positions). The piece is framed by its context first: a space
 *    before the first piece and after the last, a letter elsewhere, so that a cut through a
 *    word never makes a word (an occurrence there lies whole in the neighbouring piece, whose
 *    250-byte overlap holds it);
 *  - in the row's subject and From/To/Cc text, whose positioned vector (short texts) is
 *    computed as the insert trigger computes it.
 * Where this differs from phraseto_tsquery over stored positions (docs/disk.md "Phrases"):
 * words no longer run on from the last address word into the body's first; an occurrence whose
 * words and surrounding non-blank text pass the overlap (~250 bytes) is found only where it
 * lies whole in one piece; words separated by something the parser skips without a position
 * but which holds letters or digits (an HTML-like `<b>` tag, an `&amp;` entity) no longer make a
 * phrase; and a phrase past the vector's limits (the body's first 200,000 characters, position
 * 16,383, a word's 256th position) is now found, where positions had lost it (its words must
 * still be in the vector).
 * @param {{like: string, loose: string, window: string, seek: string, at: string, header: string}} p
 * @param {string} value the phrase as typed
 * @param {() => string} user binds the owner once more and returns its placeholder
 * @param {(v: any) => string} bind
 * @returns {string}
 */
function phraseConfirm(p, value, user, bind) {
  // Built in text order: every bind() call places its placeholder where the string has it.
  let sql = `(EXISTS (SELECT 1 FROM message_chunks c WHERE c.user_id = ${user()} `;
  sql += `AND c.mailbox_id = w.mailbox_id AND c.uid = w.uid AND c.kind = 1 `;
  sql += `AND c.t LIKE ${bind(p.like)} AND c.t ~ ${bind(p.loose)} `;
  // The framed piece once (OFFSET 0: not copied into each use below).
  sql += `AND EXISTS (SELECT 1 FROM (SELECT CASE WHEN c.seq = 0 THEN ' ' ELSE 'x' END || c.t || `;
  sql += `CASE WHEN EXISTS (SELECT 1 FROM message_chunks n WHERE n.user_id = ${user()} `;
  sql += `AND n.mailbox_id = c.mailbox_id AND n.uid = c.uid AND n.kind = 1 AND n.seq = c.seq + 1) `;
  sql += `THEN 'x' ELSE ' ' END AS t OFFSET 0) f WHERE `;
  // Each window of the text (the matches do not overlap: one pass) that the parser confirms is
  // an occurrence: its text is bounded by blanks, which end every word of the parser.
  sql += `EXISTS (SELECT 1 FROM regexp_matches(f.t, ${bind(p.window)}, 'g') AS m(m) `;
  sql += `WHERE to_tsvector('simple', m.m[1]) @@ phraseto_tsquery('simple', ${bind(value)})) `;
  // Only where none is: every occurrence in turn (s: where its first word starts; run: the
  // non-blank text before it), the next one sought from the character after s, since a window
  // the parser rejects (a first word glued into a host, an address or a path) may hold the
  // start of a true occurrence glued to it by punctuation ('www.new york,new york city'). Read
  // lazily: the EXISTS stops at the first occurrence the parser confirms.
  sql += `OR EXISTS (WITH RECURSIVE o(s, run) AS (SELECT 1 + length(h.p), `;
  sql += `substring(h.p FROM '[^[:space:]]*$') `;
  sql += `FROM (SELECT substring(f.t FROM ${bind(p.seek)}) AS p OFFSET 0) h WHERE h.p IS NOT NULL `;
  sql += `UNION ALL SELECT o.s + 1 + length(h.p), CASE WHEN h.p ~ '[[:space:]]' THEN '' `;
  sql += `ELSE o.run || substr(f.t, o.s, 1) END || substring(h.p FROM '[^[:space:]]*$') FROM o `;
  sql += `CROSS JOIN LATERAL (SELECT substring(substr(f.t, o.s + 1) FROM ${bind(p.seek)}) AS p `;
  sql += `OFFSET 0) h WHERE h.p IS NOT NULL) `;
  sql += `SELECT 1 FROM o WHERE to_tsvector('simple', o.run || `;
  sql += `substring(substr(f.t, o.s) FROM ${bind(p.at)})) `;
  sql += `@@ phraseto_tsquery('simple', ${bind(value)}))) `;
  // OFFSET 0: the candidate's own pieces, by primary key. Without it the planner may hash the
  // test over every piece of the user the trigram index gives, which it cannot keep to the one
  // mailbox: "in the" on the benchmark's large mailbox, 416 against 320 ms with it
  // (bench/results/disk-search-2026-11-28-words-stripped/offset.txt), and a user's other
  // mailboxes add their pieces too.
  sql += 'OFFSET 0)';
  // A scalar subquery of the row `w`, so that it runs for the candidates the pieces did not
  // confirm only (as EXISTS the planner hashes it, which reads every row of the user); the
  // pattern first, which is cheaper than the parser.
  sql += ` OR (SELECT (coalesce(h.subject, '') || ' ' || h.a) ~ ${bind(p.header)} AND `;
  sql += `mailgate_words(h.subject, h.a, '') @@ `;
  sql += `phraseto_tsquery('simple', ${bind(value)}) FROM (SELECT x.subject, x.from_text || ' ' || `;
  sql += `x.to_text || ' ' || x.cc_text AS a FROM messages x WHERE x.user_id = ${user()} `;
  sql += `AND x.mailbox_id = w.mailbox_id AND x.uid = w.uid) h))`;
  return sql;
}

module.exports = { wordsIn, checkedOwner, phrasePatterns };
