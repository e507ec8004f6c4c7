#!/usr/bin/env node
'use strict';

/*
 * Fetch one message through the IMAP door (issue 28: `UID FETCH n (BODY.PEEK[])` of a typical
 * message on the large mailbox, ≤ 1 ms warm): mailgate's IMAP server on the pg store and
 * Dovecot on the same Maildir, both timed by the bench's raw client (RawImapClient: writes the
 * command, reads to the tagged OK, parses nothing) in one run. A typical message: the bench
 * mailbox's messages around the median size (MESSAGES picked evenly from the middle half of
 * the sizes); each is fetched once untimed (warm), then ROUNDS timed rounds over all of them,
 * the servers alternating per round so that a busy moment of the machine hits both.
 *
 *   node scripts/bench-imap-fetch.js [--size large] [--rounds 50] [--messages 20]
 *        [--work DIR] [--out FILE]
 *
 * Also: `--item 'BODY.PEEK[]'` to time another fetch item list.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
  buildMailbox,
  SIZES,
  RawImapClient,
  machineFacts,
  dovecotServer,
  mailgateImapServer,
} = require('@mailgate/bench');
const { corpusDir } = require('../test/support/corpus');

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const SIZE = opt('--size', 'large');
const ROUNDS = Number(opt('--rounds', 50));
const MESSAGES = Number(opt('--messages', 20));
const ITEM = opt('--item', 'BODY.PEEK[]');
const WORK = path.resolve(opt('--work', path.join(os.tmpdir(), 'mailgate-bench')));
const OUT = opt('--out', null);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const round3 = (n) => +n.toFixed(3);

/** uid → RFC822.SIZE of every message, read untimed. */
async function sizes(raw) {
  const a = await raw.command('UID FETCH 1:* (RFC822.SIZE)');
  const out = [];
  for (const m of a.text().matchAll(/UID (\d+) RFC822\.SIZE (\d+)|RFC822\.SIZE (\d+) UID (\d+)/g)) {
    out.push(m[1] ? { uid: +m[1], size: +m[2] } : { uid: +m[4], size: +m[3] });
  }
  return out;
}

/** MESSAGES uids spread over the middle half of the messages ordered by size. */
function typical(list) {
  const bySize = [...list].sort((a, b) => a.size - b.size || a.uid - b.uid);
  const lo = Math.floor(bySize.length / 4);
  const span = Math.floor(bySize.length / 2);
  const out = [];
  for (let i = 0; i < MESSAGES; i++) out.push(bySize[lo + Math.floor((i * span) / MESSAGES)]);
  return out;
}

async function main() {
  const corpus = corpusDir();
  if (!corpus) throw new Error('the shared corpus is needed (../shared/corpus)');
  const box = buildMailbox({
    corpus,
    work: WORK,
    name: SIZE,
    count: SIZES[SIZE],
    log: (s) => process.stderr.write(s + '\n'),
  });
  const servers = [mailgateImapServer({ work: WORK, size: SIZE }), dovecotServer('maildir')];
  const sides = [];
  try {
    for (const server of servers) {
      process.stderr.write(`starting ${server.name}\n`);
      const ep = await server.start(box);
      if (server.settle) await server.settle();
      const raw = new RawImapClient({ host: ep.host, port: ep.port });
      await raw.connect();
      await raw.login(ep.user, ep.password);
      await raw.command('SELECT INBOX');
      const picked = typical(await sizes(raw));
      for (const m of picked) await raw.command(`UID FETCH ${m.uid} (${ITEM})`); // warm
      sides.push({ server, raw, picked, ms: [] });
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of r % 2 ? [...sides].reverse() : sides) {
        for (const m of side.picked) {
          const a = await side.raw.command(`UID FETCH ${m.uid} (${ITEM})`);
          if (!/^\S+ OK/m.test(a.text().split('\r\n').slice(-2).join('\n')))
            throw new Error(`${side.server.name}: ${a.text().slice(-200)}`);
          side.ms.push(a.ms);
        }
      }
    }
  } finally {
    for (const side of sides) await side.raw.logout().catch(() => {});
    for (const server of servers) {
      await (server.close ? server.close() : server.stop()).catch(() => {});
    }
  }
  const results = sides.map((s) => ({
    server: s.server.name,
    door: 'imap',
    size: SIZE,
    messages: SIZES[SIZE],
    request: `UID FETCH n (${ITEM})`,
    phase: 'warm',
    samples: s.ms.length,
    messageBytes: { median: median(s.picked.map((m) => m.size)) },
    ms: {
      median: round3(median(s.ms)),
      p90: round3(pct(s.ms, 0.9)),
      min: round3(Math.min(...s.ms)),
      max: round3(Math.max(...s.ms)),
    },
  }));
  const out = { machine: machineFacts({ work: WORK }), when: new Date().toISOString(), results };
  const text = JSON.stringify(out, null, 2) + '\n';
  if (OUT) fs.writeFileSync(OUT, text);
  process.stdout.write(text);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
