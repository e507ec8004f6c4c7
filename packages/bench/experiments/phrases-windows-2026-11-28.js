'use strict';

/*
 * Review finding [3] on the stored word vectors without positions: phraseConfirm took each
 * occurrence's window with regexp_matches(piece, '([^[:space:]]*CORE[^[:space:]]*)', 'g'),
 * whose matches do not overlap, so a rejected occurrence (the first word glued into a host)
 * could swallow the start of a true one ('see www.new york,new york city'). The store now walks
 * every start of the words in order (store/lib/words-sql.js phraseConfirm). This times the two,
 * alternating in one run on one database, with phraseto_tsquery on positions as the reference
 * for the answers: `before` = positions (w_pos, as in phrases-stripped-2026-11-28.js),
 * `previous` = the windows of f1811f9 (frozen here), `now` = the store's wordsIn.
 * On a database of the benchmark's large mailbox (the `--work` folder of
 * `npx mailgate bench --sizes large --backends pg`, its embedded server started with
 * `MAILGATE_HOME=<work>/pg-home npx mailgate db start`). Warm: each statement runs once first.
 * Usage: DATABASE_URL=postgres://… node phrases-windows-2026-11-28.js [rounds]
 */
const { Client } = require('pg');
const { compileSql, parse } = require('@mailgate/query');
const { wordsIn, phrasePatterns } = require('../../store/lib/words-sql');
const { textOf } = require('../../store/lib/chunks-sql');

// The search box's usual phrases and tricky ones (initials, times, addresses, hyphens).
const PHRASES = [
  'would like',
  'happy new year',
  'please let me know',
  'let me know if you have any questions',
  'thank you',
  'in the',
  'of the',
  'natural gas',
  'gas prices',
  'power marketing',
  'conference call',
  'call me',
  'see attached',
  'original message',
  'enron corp',
  'next week',
  'as soon as possible',
  'for your information',
  'best regards',
  'el paso',
  'san diego gas',
  'vince kaminski',
  'phillip allen',
  'k. allen',
  "don't know",
  'p.m.',
  '3:00 pm',
  'e-mail me',
  'ect@ect',
  'hou/ect@ect',
];

// The alone form of the code before (words-sql.js at cd8ae54), over the copy w_pos.
const beforeHook =
  (userId, mailboxColumn, alone) =>
  ({ tsquery, bind }) => {
    alone.answered = true;
    return (
      `SELECT w.uid FROM w_pos w WHERE w.user_id = ${bind(userId)} ` +
      `AND w.mailbox_id = ${mailboxColumn} AND w.tsv @@ ${tsquery()}`
    );
  };

// The phrase term of f1811f9 (words-sql.js there), frozen: the windows by regexp_matches 'g'.
const previousConfirm = (p, value, user, bind) => {
  const window = `([^[:space:]]*${p.loose}[^[:space:]]*)`;
  let sql = `(EXISTS (SELECT 1 FROM message_chunks c WHERE c.user_id = ${user()} `;
  sql += `AND c.mailbox_id = w.mailbox_id AND c.uid = w.uid AND c.kind = 1 `;
  sql += `AND c.t LIKE ${bind(p.like)} AND c.t ~ ${bind(p.loose)} `;
  sql += `AND EXISTS (SELECT 1 FROM regexp_matches(CASE WHEN c.seq = 0 THEN ' ' ELSE 'x' END || c.t || `;
  sql += `CASE WHEN EXISTS (SELECT 1 FROM message_chunks n WHERE n.user_id = ${user()} `;
  sql += `AND n.mailbox_id = c.mailbox_id AND n.uid = c.uid AND n.kind = 1 AND n.seq = c.seq + 1) `;
  sql += `THEN 'x' ELSE ' ' END, ${bind(window)}, 'g') AS o(m) `;
  sql += `WHERE to_tsvector('simple', o.m[1]) @@ phraseto_tsquery('simple', ${bind(value)})) `;
  sql += 'OFFSET 0)';
  sql += ` OR (SELECT (coalesce(h.subject, '') || ' ' || h.a) ~ ${bind(p.header)} AND `;
  sql += `mailgate_words(h.subject, h.a, '') @@ `;
  sql += `phraseto_tsquery('simple', ${bind(value)}) FROM (SELECT x.subject, x.from_text || ' ' || `;
  sql += `x.to_text || ' ' || x.cc_text AS a FROM messages x WHERE x.user_id = ${user()} `;
  sql += `AND x.mailbox_id = w.mailbox_id AND x.uid = w.uid) h))`;
  return sql;
};
const previousHook =
  (userId, mailboxColumn, alone) =>
  ({ tsquery, bind, phrase, value }) => {
    alone.answered = true;
    const u = bind(userId);
    const p = phrase ? phrasePatterns(value) : null;
    const match = p
      ? `w.tsv @@ plainto_tsquery('simple', ${bind(value)}) AND ` +
        previousConfirm(p, value, () => bind(userId), bind)
      : `w.tsv @@ ${tsquery()}`;
    return (
      `SELECT w.uid FROM message_words w WHERE w.user_id = ${u} ` +
      `AND w.mailbox_id = ${mailboxColumn} AND ${match}`
    );
  };

function statement(hook, phrase, userId, mailboxId) {
  const alone = { answered: false };
  const c = compileSql(parse(`"${phrase}"`), {
    alias: 'm',
    userId,
    words: hook(userId, 'b.id', alone),
  });
  if (!alone.answered) throw new Error('not the alone form');
  return {
    text:
      `SELECT a.uid FROM mailboxes b CROSS JOIN LATERAL (${c.sql}) a ` +
      'WHERE b.user_id = ? AND b.id = ? ORDER BY a.uid',
    values: [...c.bindings, userId, mailboxId],
  };
}

// knex-style `?` placeholders to pg's `$n`.
const numbered = (s) => {
  let i = 0;
  return s.replace(/\?/g, () => `$${++i}`);
};

async function timed(client, st) {
  const t0 = process.hrtime.bigint();
  const r = await client.query(numbered(st.text), st.values);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, uids: r.rows.map((x) => x.uid) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const rounds = Number(process.argv[2] || 7);
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const mb = (
      await client.query(
        `SELECT user_id, mailbox_id, count(*)::int AS n FROM messages WHERE NOT expunged
          GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 1`,
      )
    ).rows[0];
    const user = Number(mb.user_id);
    await client.query('DROP TABLE IF EXISTS w_pos');
    const t0 = Date.now();
    await client.query(
      `CREATE TABLE w_pos AS SELECT m.user_id, m.mailbox_id, m.uid,
         mailgate_words(m.subject, m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
           CASE WHEN m.body_text <> '' THEN m.body_text ELSE ${textOf('m', 1, user)} END) AS tsv
         FROM messages m WHERE m.user_id = $1 AND m.mailbox_id = $2`,
      [user, mb.mailbox_id],
    );
    const built = Date.now() - t0;
    await client.query('CREATE INDEX ON w_pos USING gin (tsv)');
    await client.query('CREATE INDEX ON w_pos (user_id, mailbox_id, uid)');
    await client.query('VACUUM ANALYZE w_pos');
    // The vectors computed again hold the stored lexemes (the stored ones are stripped).
    const same = (
      await client.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE strip(p.tsv) = w.tsv)::int AS same
           FROM w_pos p JOIN message_words w USING (user_id, mailbox_id, uid)`,
      )
    ).rows[0];
    const size = (
      await client.query(
        `SELECT (SELECT pg_total_relation_size('w_pos'))::bigint AS pos,
                (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_inherits i
                   JOIN pg_class c ON c.oid = i.inhrelid
                  WHERE i.inhparent = 'message_words'::regclass)::bigint AS stored`,
      )
    ).rows[0];
    const out = {
      mailbox: { user, mailboxId: mb.mailbox_id, messages: mb.n },
      rounds,
      positionedCopyBuiltMs: built,
      positionedCopyLexemesAsStored: same,
      bytes: { positionedCopy: Number(size.pos), storedWords: Number(size.stored) },
      phrases: [],
    };
    for (const phrase of PHRASES) {
      const st = {
        before: statement(beforeHook, phrase, user, mb.mailbox_id),
        previous: statement(previousHook, phrase, user, mb.mailbox_id),
        now: statement((u, col, alone) => wordsIn(u, col, { alone }), phrase, user, mb.mailbox_id),
      };
      const first = {};
      for (const k of Object.keys(st)) first[k] = new Set((await timed(client, st[k])).uids.map(String));
      const ms = { before: [], previous: [], now: [] };
      for (let i = 0; i < rounds; i++) {
        // alternating, the order turned each round
        const order = i % 2 ? ['now', 'previous', 'before'] : ['before', 'previous', 'now'];
        for (const k of order) ms[k].push((await timed(client, st[k])).ms);
      }
      const diff = (a, b) => [...first[a]].filter((u) => !first[b].has(u)).length;
      const row = {
        phrase,
        hits: { before: first.before.size, previous: first.previous.size, now: first.now.size },
        onlyBefore: { previous: diff('before', 'previous'), now: diff('before', 'now') },
        onlyNow: { previous: diff('now', 'previous'), before: diff('now', 'before') },
        ms: Object.fromEntries(
          Object.entries(ms).map(([k, xs]) => [k, { median: median(xs), min: Math.min(...xs) }]),
        ),
      };
      out.phrases.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await client.query('DROP TABLE IF EXISTS w_pos').catch(() => {});
    await client.end();
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exitCode = 1;
});
