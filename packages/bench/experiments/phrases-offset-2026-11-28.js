'use strict';

/*
 * Issue 30.6, phrases on the stored vectors without positions: why the pieces' test of a
 * phrase (store/lib/words-sql.js phraseConfirm) ends in `OFFSET 0`. EXPLAIN ANALYZE of one
 * phrase in the mailbox with the most messages, the store's statement as it is and without the
 * `OFFSET 0` (the planner may then hash the test over every piece of the user the trigram
 * index gives, which it cannot keep to the one mailbox).
 * Usage: DATABASE_URL=postgres://… node phrases-offset-2026-11-28.js ["phrase"]
 */
const { Client } = require('pg');
const { compileSql, parse } = require('@mailgate/query');
const { wordsIn } = require('../../store/lib/words-sql');

async function main() {
  const phrase = process.argv[2] || 'in the';
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
    const alone = { answered: false };
    const c = compileSql(parse(`"${phrase}"`), {
      alias: 'm',
      userId: user,
      words: wordsIn(user, 'b.id', { alone }),
    });
    const text =
      `SELECT a.uid FROM mailboxes b CROSS JOIN LATERAL (${c.sql}) a ` +
      'WHERE b.user_id = ? AND b.id = ? ORDER BY a.uid';
    if (!text.includes('OFFSET 0)')) throw new Error('no OFFSET 0 in the statement');
    for (const [name, sql] of [
      ['as stored (OFFSET 0)', text],
      ['without OFFSET 0', text.replace('OFFSET 0)', ')')],
    ]) {
      let i = 0;
      const r = await client.query(
        `EXPLAIN (ANALYZE, COSTS OFF) ${sql.replace(/\?/g, () => `$${++i}`)}`,
        [...c.bindings, user, mb.mailbox_id],
      );
      process.stdout.write(`## ${name}: "${phrase}", mailbox of ${mb.n} messages\n`);
      process.stdout.write(`${r.rows.map((x) => x['QUERY PLAN']).join('\n')}\n\n`);
    }
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exitCode = 1;
});
