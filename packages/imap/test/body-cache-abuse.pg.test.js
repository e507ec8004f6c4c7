'use strict';

const { msg } = require('@mailgate/test-support/mail');
const { statementsDuring } = require('@mailgate/test-support/db');
const { toCrlf } = require('@mailgate/mime/crlf');
const { createImapServer } = require('../lib');
const { ENTRY_OVERHEAD } = require('../lib/body-cache');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * The body cache's per-user share under abuse (lib/body-cache.js; the brief: one user's heavy
 * work never takes more than its share, and every abuse test measures an innocent client beside
 * the attack). One user downloads many large messages over and over from three sessions at once
 * while an innocent user keeps fetching its own few messages: the innocent answers stay
 * byte-exact, and the innocent entries (within its share) stay cached through the whole flood,
 * so its repeated fetches still send no statement. Counted, never timed.
 */

const PW = { mal: 'mal pw 123', inn: 'inn pw 123' };
const LINE = 'y'.repeat(76) + '\n';
const INNOCENT = 4; // the innocent user's messages, all within its share
const LARGE = 24; // the attacker's messages, ~40 KB each as the innocent ones: six shares' worth

let env;
let server;
let port;
const sent = new Map(); // innocent uid → the CRLF bytes a FETCH must answer
let share;

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  const inn = await env.service.openBackend('pg', 'inn');
  await inn.createMailbox('INBOX');
  let innBytes = 0;
  for (let i = 1; i <= INNOCENT; i++) {
    const raw = msg({ subject: `innocent ${i}`, body: LINE.repeat(500 + i) });
    await inn.append('INBOX', raw, {});
    sent.set(i, toCrlf(Buffer.from(raw)));
    innBytes += sent.get(i).length + ENTRY_OVERHEAD;
  }
  await inn.close();
  const mal = await env.service.openBackend('pg', 'mal');
  await mal.createMailbox('INBOX');
  for (let i = 1; i <= LARGE; i++) {
    await mal.append('INBOX', msg({ subject: `large ${i}`, body: LINE.repeat(500) }), {});
  }
  await mal.close();
  // The innocent user's messages fill most of one share; the attacker's are six shares.
  share = innBytes + 1024;
  server = createImapServer({
    service: env.service,
    bodyCache: { maxBytes: 4 * share, userBytes: share },
    limits: { idlePollMs: 100 },
  });
  ({ port } = await server.listen({ port: 0, host: '127.0.0.1' }));
}, 60000);

afterAll(async () => {
  if (server) await server.close();
  if (env) await env.close();
});

async function session(user) {
  const c = await RawClient.connect(port);
  await c.cmd('a', `LOGIN ${user} "${PW[user]}"`);
  await c.cmd('b', 'SELECT INBOX');
  return c;
}

/** The literal of `UID FETCH uid (BODY.PEEK[])`'s answer, as bytes. */
function bodyOf(answer, uid) {
  const m = new RegExp(`^\\* \\d+ FETCH \\(UID ${uid} BODY\\[\\] \\{(\\d+)\\}\\r\\n`, 'm').exec(
    answer,
  );
  if (!m) throw new Error(`no BODY[] of uid ${uid} in ${answer.slice(0, 200)}`);
  const start = m.index + m[0].length;
  return Buffer.from(answer.slice(start, start + Number(m[1])), 'latin1');
}

test('one user downloading large mail from three sessions never evicts an innocent user’s entries', async () => {
  const cache = server.bodyCache;
  const sessions = [];
  try {
    const inn = await session('inn');
    sessions.push(inn);
    const attackers = [];
    for (let i = 0; i < 3; i++) attackers.push(await session('mal'));
    sessions.push(...attackers);
    let tag = 0;
    const innocentRound = async () => {
      for (let uid = 1; uid <= INNOCENT; uid++) {
        const a = await inn.cmd(`i${tag++}`, `UID FETCH ${uid} (BODY.PEEK[])`);
        expect(Buffer.compare(bodyOf(a, uid), sent.get(uid))).toBe(0);
      }
    };
    await innocentRound(); // fills the innocent entries
    const innBytes = cache.stats().users.get('inn');
    expect(innBytes).toBeLessThanOrEqual(share);
    // The flood: each attacking session reads every large message, three times over, in
    // different orders, while the innocent client keeps fetching its own.
    const flood = attackers.map(async (c, k) => {
      for (let round = 0; round < 3; round++) {
        for (let j = 0; j < LARGE; j++) {
          const uid = ((j * (k + 1) + round) % LARGE) + 1;
          const a = await c.cmd(`m${k}${round}${j}`, `UID FETCH ${uid} (BODY.PEEK[])`);
          expect(a).toMatch(new RegExp(`UID ${uid} BODY\\[\\] \\{\\d+\\}`));
        }
      }
    });
    const innocent = (async () => {
      for (let round = 0; round < 6; round++) await innocentRound();
    })();
    await Promise.all([...flood, innocent]);
    const st = cache.stats();
    // The attacker stays within one share; the total within its bound.
    expect(st.users.get('mal')).toBeLessThanOrEqual(share);
    expect(st.bytes).toBeLessThanOrEqual(4 * share);
    // Every innocent entry survived: its bytes are all still held, and a repeated FETCH of
    // all its messages is answered from memory, byte-exact, with no statement.
    expect(st.users.get('inn')).toBe(innBytes);
    const again = await statementsDuring(env.service.store.knex, () =>
      inn.cmd('z', `UID FETCH 1:${INNOCENT} (BODY.PEEK[])`),
    );
    expect(again.sql).toEqual([]);
    for (let uid = 1; uid <= INNOCENT; uid++) {
      expect(Buffer.compare(bodyOf(again.result, uid), sent.get(uid))).toBe(0);
    }
  } finally {
    for (const c of sessions) c.close();
  }
});
