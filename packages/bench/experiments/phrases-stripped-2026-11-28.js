'use strict';

/*
 * Issue 30.6, the stored word vectors without positions: what a phrase search costs now (every
 * word in the stripped vector, then the words in order on the text's pieces, store/lib/
 * words-sql.js) against before (phraseto_tsquery on stored positions), alternating in one run
 * on one database, and whether the two answer the same messages.
 *
 * On a database of the code after the change holding the benchmark's large mailbox (the
 * `--work` folder of `npx mailgate bench --sizes large --backends pg`, its embedded server
 * started with `MAILGATE_HOME=<work>/… npx mailgate db start`), the mailbox with the most
 * messages: `before` reads a copy of its vectors with positions (w_pos, computed again from the
 * text by the trigger's own mailgate_words, with the same GIN index), `after` the stored ones.
 * Both are compiled by @mailgate/query compileSql with the `alone` form of a one-term search
 * in one mailbox (what scan-ops search runs while the mailbox has no hidden row): before with
 * the hook of the code before (frozen here), after with the store's wordsIn. Warm: each
 * statement runs once before the timed rounds.
 * Usage: DATABASE_URL=postgres://… node phrases-stripped-2026-11-28.js [rounds]
 */
const { Client } = require('pg');
const { compileSql, parse } = require('@mailgate/query');
const { wordsIn } = require('../../store/lib/words-sql');
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
      const before = statement(beforeHook, phrase, user, mb.mailbox_id);
      const after = statement((u, col, alone) => wordsIn(u, col, { alone }), phrase, user, mb.mailbox_id);
      const b0 = await timed(client, before);
      const a0 = await timed(client, after);
      const ms = { before: [], after: [] };
      for (let i = 0; i < rounds; i++) {
        ms.before.push((await timed(client, before)).ms);
        ms.after.push((await timed(client, after)).ms);
      }
      const bs = new Set(b0.uids.map(String));
      const as = new Set(a0.uids.map(String));
      const row = {
        phrase,
        hits: { before: bs.size, after: as.size },
        onlyBefore: [...bs].filter((u) => !as.has(u)).length,
        onlyAfter: [...as].filter((u) => !bs.has(u)).length,
        ms: {
          before: { median: median(ms.before), min: Math.min(...ms.before) },
          after: { median: median(ms.after), min: Math.min(...ms.after) },
        },
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
