'use strict';

/*
 * mailgate_join_pieces before and after 20261201150100_join_pieces_linear.js (issue 35.3): the
 * two functions exactly as the migration's down() and up() create them, on one PostgreSQL,
 * timed in turns on texts of growing length cut as the store cuts them (3,800-byte step,
 * 250 overlap), up to the importer's 2,000,000-character cap. Prints one JSON object.
 *
 *   node packages/bench/experiments/join-pieces-2026-11-28.js postgres://…/db [reps]
 */

const Knex = require('knex');
const migration = require('../../store/migrations/20261201150100_join_pieces_linear');

const STEP = 3800;
const OVERLAP = 250;

function cut(text) {
  const b = Buffer.from(text, 'utf8');
  if (b.length <= STEP + OVERLAP) return [text];
  const inside = (x) => x < b.length && (b[x] & 0xc0) === 0x80;
  const out = [];
  for (let i = 0; ; i++) {
    let a = i * STEP;
    while (inside(a)) a++;
    let e = Math.min(i * STEP + STEP + OVERLAP, b.length);
    while (inside(e)) e++;
    out.push(b.subarray(a, e).toString('utf8'));
    if (e >= b.length) return out;
  }
}

async function main() {
  const url = process.argv[2];
  const reps = Number(process.argv[3] || 3);
  const knex = Knex({ client: 'pg', connection: url, pool: { min: 1, max: 1 } });
  const rows = [];
  try {
    const make = async (which, name) => {
      await migration[which]({ raw: (sql) => knex.raw(sql) });
      await knex.raw(`DROP FUNCTION IF EXISTS ${name}(text[])`);
      await knex.raw(`ALTER FUNCTION mailgate_join_pieces(text[]) RENAME TO ${name}`);
    };
    await make('down', 'join_quadratic');
    await make('up', 'join_linear');
    const words = [...'wärme öl 😀 '];
    const texts = [100000, 250000, 500000, 1000000, 2000000].map((chars) => ({
      chars,
      text: Array.from({ length: chars }, (_, i) => words[i % words.length]).join(''),
    }));
    // The worst case of the cap: 2,000,000 characters of 4 bytes each (8 MB).
    texts.push({ chars: 2000000, text: '😀'.repeat(2000000) });
    for (const { chars, text } of texts) {
      const pieces = cut(text);
      await knex.raw('DROP TABLE IF EXISTS jp');
      await knex.raw('CREATE TABLE jp AS SELECT ?::text[] AS ps', [pieces]);
      const ms = { join_quadratic: [], join_linear: [] };
      for (const f of Object.keys(ms)) {
        const got = await knex.raw(`SELECT ${f}(ps) = ? AS same FROM jp`, [text]);
        if (!got.rows[0].same) throw new Error(`${f} gave another text`);
      }
      // Timed: the join alone (its length is all that leaves the server), in turns.
      for (let r = 0; r < reps; r++) {
        for (const f of r % 2 ? ['join_linear', 'join_quadratic'] : ['join_quadratic', 'join_linear']) {
          const t0 = process.hrtime.bigint();
          await knex.raw(`SELECT octet_length(${f}(ps)) FROM jp`);
          ms[f].push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }
      const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
      rows.push({
        chars,
        bytes: Buffer.byteLength(text),
        pieces: pieces.length,
        quadratic_ms: ms.join_quadratic.map((x) => +x.toFixed(1)),
        linear_ms: ms.join_linear.map((x) => +x.toFixed(1)),
        quadratic_median: +med(ms.join_quadratic).toFixed(1),
        linear_median: +med(ms.join_linear).toFixed(1),
      });
      process.stderr.write(JSON.stringify(rows[rows.length - 1]) + '\n');
    }
    const v = await knex.raw('SHOW server_version');
    process.stdout.write(
      JSON.stringify({ postgres: v.rows[0].server_version, reps, rows }, null, 1) + '\n',
    );
  } finally {
    await knex.raw('DROP TABLE IF EXISTS jp').catch(() => {});
    await knex.destroy();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
