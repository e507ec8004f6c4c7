'use strict';

/*
 * The set-up the IMAP wire benchmarks (`bench imap-fetch`, `bench imap-idle-latency`,
 * `bench imap-losses`) share, and how the first two pick typical messages:
 * mailgate's IMAP server on the pg store and Dovecot on the same Maildir, both started on one
 * built mailbox, each given the same client sessions, the samples interleaved by the command,
 * everything closed however the run ends; and the per-server summary of the samples. It times
 * nothing itself.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { buildMailbox, SIZES } = require('./mailboxes');
const { option, corpusDir } = require('./command-kit');
const { RawImapClient } = require('./raw-imap');
const { dovecotServer } = require('./dovecot-server');
const { mailgateImapServer } = require('./mailgate-imap-server');
const { machineFacts } = require('./machine');

/**
 * Starts both servers on `box`, opens each one's sessions with `open`, runs `body` over the
 * sides and closes every session and server afterwards.
 * @param {{box: object, work: string, size: string, settle?: boolean, purge?: boolean}} o
 *   settle: let the mailgate server finish its post-import work untimed (autovacuum) before
 *   the sessions open; purge: mailgate's background purge on (mailgate-imap-server.js)
 * @param {(ep: object) => Promise<{close: () => Promise<void>}>} open one server's sessions
 * @param {(sides: object[]) => Promise<void>} body the timed part; sides are
 *   `{server, ...what open returned}`, mailgate's first
 * @returns {Promise<object[]>} the sides, for the summary
 */
async function withImapPair(o, open, body) {
  const servers = [
    mailgateImapServer({ work: o.work, size: o.size, purge: o.purge }),
    dovecotServer('maildir'),
  ];
  const sides = [];
  try {
    for (const server of servers) {
      process.stderr.write(`starting ${server.name}\n`);
      const ep = await server.start(o.box);
      if (o.settle && server.settle) await server.settle();
      sides.push({ server, ...(await open(ep)) });
    }
    await body(sides);
  } finally {
    for (const side of sides) await side.close().catch(() => {});
    for (const server of servers) {
      await (server.close ? server.close() : server.stop()).catch(() => {});
    }
  }
  return sides;
}

/**
 * A raw client (writes the command, reads to the tagged OK, parses nothing) logged in.
 * @param {{host: string, port: number, user: string, password: string}} ep
 * @returns {Promise<RawImapClient>}
 */
async function rawSession(ep) {
  const raw = new RawImapClient({ host: ep.host, port: ep.port });
  await raw.connect();
  await raw.login(ep.user, ep.password);
  return raw;
}

/** Median of samples (of an even count: the mean of the middle two). */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Median, p90, min and max of samples in ms, rounded to `digits` decimals.
 * @param {number[]} xs
 * @param {number} digits
 */
function spread(xs, digits) {
  const r = (n) => +n.toFixed(digits);
  const p90 = [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.9 * xs.length))];
  return {
    median: r(median(xs)),
    p90: r(p90),
    min: r(Math.min(...xs)),
    max: r(Math.max(...xs)),
  };
}

/**
 * Prints the run's JSON (machine facts, time, results) on stdout and writes it to `file` too.
 * @param {{work: string, file: string|null, results: object[]}} o
 */
function writeRun(o) {
  const out = { machine: machineFacts({ work: o.work }), when: new Date().toISOString() };
  const text = JSON.stringify({ ...out, results: o.results }, null, 2) + '\n';
  if (o.file) fs.writeFileSync(o.file, text);
  process.stdout.write(text);
}

/**
 * The mailbox both servers start on: `SIZES[size]` messages of the shared corpus, built (once,
 * then kept) under --work (default <tmp>/mailgate-bench).
 * @param {string[]} args the command's arguments (--work)
 * @param {string} size small, medium or large
 * @param {{log?: boolean}} [o] log: the builder's progress on stderr
 * @returns {{work: string, box: object}}
 */
function pairMailbox(args, size, o = {}) {
  const work = path.resolve(option(args, '--work', path.join(os.tmpdir(), 'mailgate-bench')));
  const corpus = corpusDir();
  if (!corpus) throw new Error('the shared corpus is needed (../shared/corpus)');
  const log = o.log ? { log: (s) => process.stderr.write(s + '\n') } : {};
  return { work, box: buildMailbox({ corpus, work, name: size, count: SIZES[size], ...log }) };
}

/**
 * uid → RFC822.SIZE of every message of the selected mailbox, read untimed (either order of
 * the two items in the answer).
 * @param {{command: (c: string) => Promise<{text: () => string}>}} raw a RawImapClient session
 * @returns {Promise<Array<{uid: number, size: number}>>}
 */
async function messageSizes(raw) {
  const a = await raw.command('UID FETCH 1:* (RFC822.SIZE)');
  const out = [];
  for (const m of a.text().matchAll(/UID (\d+) RFC822\.SIZE (\d+)|RFC822\.SIZE (\d+) UID (\d+)/g)) {
    out.push(m[1] ? { uid: +m[1], size: +m[2] } : { uid: +m[4], size: +m[3] });
  }
  return out;
}

/**
 * `count` messages spread over the middle half of the messages ordered by size (typical
 * messages, neither the smallest nor the largest: `bench imap-fetch`, `bench imap-losses`).
 * @param {Array<{uid: number, size: number}>} list
 * @param {number} count
 * @returns {Array<{uid: number, size: number}>}
 */
function typicalBySize(list, count) {
  const bySize = [...list].sort((a, b) => a.size - b.size || a.uid - b.uid);
  const lo = Math.floor(bySize.length / 4);
  const span = Math.floor(bySize.length / 2);
  const out = [];
  for (let i = 0; i < count; i++) out.push(bySize[lo + Math.floor((i * span) / count)]);
  return out;
}

module.exports = {
  withImapPair,
  rawSession,
  median,
  spread,
  writeRun,
  pairMailbox,
  messageSizes,
  typicalBySize,
};
