'use strict';

/*
 * The IMAP door's losses of issue 35 item 4, each timed beside Dovecot on the same Maildir by
 * the same raw client (RawImapClient: writes the command, reads to the tagged OK, parses
 * nothing), in one run on one built mailbox:
 *
 *   fetch_one       `UID FETCH n (BODY.PEEK[])` of typical messages (as `bench imap-fetch`),
 *                   each fetched once before timing: repeated fetches (mailgate: from its
 *                   cache of message bytes, packages/imap/lib/body-cache.js)
 *   fetch_one_first the same of other typical messages, each fetched once only: the first
 *                   fetch of a message by the server process (mailgate: from PostgreSQL;
 *                   Dovecot: a file the build wrote, likely in the page cache)
 *   reselect        `SELECT INBOX` while INBOX is the selected mailbox
 *   store_1pct      `STORE <1% of the messages> +FLAGS.SILENT (\Flagged)` (then cleared, untimed)
 *   store_20pct     the same on 20%
 *   copy            `UID COPY 1:* LossCopy`: the whole mailbox into a new one
 *   expunge_1pct    `STORE <1%> +FLAGS.SILENT (\Deleted)` + `EXPUNGE`: the client's answer; on
 *                   mailgate `purge` follows: from the EXPUNGE's OK until the server's own
 *                   background purge (on in this run) has removed the rows, polled by the
 *                   bench; `expunge_1pct_with_purge` is their sum
 *
 * STORE and expunge run on the imported mailbox (INBOX) and on the copy made by COPY, in the
 * order a client would: COPY, SELECT of the copy, then the STOREs at once (no pause in which a
 * background ANALYZE could finish: the first STORE after the COPY is reported apart, `first`).
 * Each row carries the CPU milliseconds of the server's processes (mailgate: its IMAP process
 * and PostgreSQL; Dovecot: its master and children) over its samples, from /proc.
 *
 *   npm run bench:imap-losses -- [--size large] [--rounds 20] [--messages 20] [--samples 3]
 *        [--work DIR] [--out FILE] [--only fetch[,reselect]|copy]
 *
 * `--only fetch` times fetch_one and fetch_one_first alone (no re-SELECT, STORE, COPY or
 * expunge); `--only fetch,reselect` the re-SELECT too. `--only copy` times `UID COPY 1:*`
 * alone, `--samples` times on each server, each into a new mailbox (DELETE and CREATE
 * untimed), the servers taking turns going first.
 */

const { SIZES } = require('../mailboxes');
const {
  withImapPair,
  rawSession,
  spread,
  writeRun,
  pairMailbox,
  messageSizes,
  typicalBySize,
} = require('../imap-pair');
const { option } = require('../command-kit');
const { sample } = require('../harness');
const { cpuMs } = require('../deliver-clients');

const COPY = 'LossCopy';

/**
 * A sequence set of ascending numbers, consecutive runs as ranges (`1:3,7`).
 * @param {number[]} nums ascending
 */
function seqSet(nums) {
  const parts = [];
  for (let i = 0; i < nums.length; i++) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++;
    parts.push(j > i ? `${nums[i]}:${nums[j]}` : String(nums[i]));
    i = j;
  }
  return parts.join(',');
}

/** Sequence numbers of a seeded `fraction` of `total` messages (the same on every server). */
const pick = (total, fraction, seed) =>
  seqSet(
    sample(
      Array.from({ length: total }, (_, i) => i + 1),
      fraction,
      seed,
    ),
  );

/** CPU ms of a server's processes so far. */
const serverCpu = (side) => cpuMs(side.server.pids ? side.server.pids() : []);

/** A row of samples, with the CPU its server spent over them. */
function row(side, request, mailbox, ms, cpu, extra = {}) {
  return {
    server: side.server.name,
    door: 'imap',
    request,
    mailbox,
    samples: ms.length,
    ms: spread(ms, 3),
    cpuMsPerSample: cpu == null ? null : +(cpu / ms.length).toFixed(1),
    ...extra,
  };
}

/** `samples` STOREs of `set` (+\Flagged timed, -\Flagged untimed); the first kept apart. */
async function stores(side, set, samples) {
  const ms = [];
  let cpu = 0;
  for (let i = 0; i < samples; i++) {
    const c0 = serverCpu(side);
    const a = await side.raw.command(`STORE ${set} +FLAGS.SILENT (\\Flagged)`);
    cpu += serverCpu(side) - c0;
    ms.push(a.ms);
    await side.raw.command(`STORE ${set} -FLAGS.SILENT (\\Flagged)`);
  }
  return { ms, cpu };
}

/**
 * Expunge of `set` in the selected mailbox: \Deleted + EXPUNGE timed; on mailgate then the
 * wait from the EXPUNGE's OK until its background purge has removed the rows (`purge`, CPU of
 * its IMAP process and PostgreSQL over that wait), and the two together.
 */
async function expunge(side, mailbox, set, label) {
  const out = [];
  const c0 = serverCpu(side);
  const a = await side.raw.command(`STORE ${set} +FLAGS.SILENT (\\Deleted)`);
  const b = await side.raw.command('EXPUNGE');
  const okAt = process.hrtime.bigint();
  const cpu = serverCpu(side) - c0;
  const ms = a.ms + b.ms;
  out.push(row(side, 'expunge_1pct', label, [ms], cpu, { expunged: b.untagged }));
  if (typeof side.server.purged === 'function') {
    await side.server.purged(mailbox);
    const pms = Number(process.hrtime.bigint() - okAt) / 1e6;
    const pcpu = serverCpu(side) - c0 - cpu;
    out.push(row(side, 'purge', label, [pms], pcpu));
    out.push(row(side, 'expunge_1pct_with_purge', label, [ms + pms], cpu + pcpu));
  }
  return out;
}

/**
 * `bench imap-losses`: see the file comment.
 * @param {string[]} args --size, --rounds, --messages, --samples, --work, --out
 */
async function main(args) {
  const SIZE = option(args, '--size', 'large');
  const ROUNDS = Number(option(args, '--rounds', 20));
  const MESSAGES = Number(option(args, '--messages', 20));
  const SAMPLES = Number(option(args, '--samples', 3));
  // --only fetch[,reselect]: those rows alone (no STORE, COPY or expunge); --only copy: COPY.
  const only = option(args, '--only', null);
  const ONLY = only === null ? null : new Set(only.split(','));
  const COPY_ONLY = Boolean(ONLY && ONLY.size === 1 && ONLY.has('copy'));
  if (
    ONLY &&
    !COPY_ONLY &&
    (!ONLY.has('fetch') || [...ONLY].some((x) => x !== 'fetch' && x !== 'reselect'))
  )
    throw new Error('--only takes: fetch, fetch,reselect or copy');
  const RESELECT = !ONLY || ONLY.has('reselect');
  const { work: WORK, box } = pairMailbox(args, SIZE, { log: true });
  const log = (s) => process.stderr.write(`imap-losses: ${s}\n`);
  const results = [];
  const open = async (ep) => {
    const raw = await rawSession(ep);
    const sel = await raw.command('SELECT INBOX');
    const sizes = await messageSizes(raw);
    const picked = typicalBySize(sizes, MESSAGES);
    for (const m of picked) await raw.command(`UID FETCH ${m.uid} (BODY.PEEK[])`); // warm
    // Typical messages never fetched yet: MESSAGES for each round, each fetched once.
    const taken = new Set(picked.map((m) => m.uid));
    const fresh = typicalBySize(sizes, MESSAGES * (ROUNDS + 1)).filter((m) => !taken.has(m.uid));
    return { raw, picked, fresh, total: sel.exists(), close: () => raw.logout() };
  };
  // Alternating which server goes first, so a busy moment of the machine hits both.
  const each = async (sides, r, fn) => {
    for (const side of r % 2 ? [...sides].reverse() : sides) await fn(side);
  };
  const pair = { box, work: WORK, size: SIZE, settle: true, purge: true };
  await withImapPair(pair, open, async (sides) => {
    const total = sides[0].total;
    for (const side of sides) {
      if (side.total !== total) throw new Error(`${side.server.name}: ${side.total} messages`);
    }
    const one = pick(total, 0.01, 35001);
    const fifth = pick(total, 0.2, 35002);
    const gone = pick(total, 0.01, 35003);

    if (COPY_ONLY) {
      log(`COPY of the whole mailbox, ${SAMPLES} times on each server`);
      const copies = new Map(sides.map((s) => [s, { ms: [], cpu: 0 }]));
      for (let r = 0; r < SAMPLES; r++) {
        await each(sides, r, async (side) => {
          const c = copies.get(side);
          await side.raw.command(`DELETE ${COPY}`).catch(() => {});
          await side.raw.command(`CREATE ${COPY}`);
          const c0 = serverCpu(side);
          c.ms.push((await side.raw.command(`UID COPY 1:* ${COPY}`)).ms);
          c.cpu += serverCpu(side) - c0;
          const st = await side.raw.command(`STATUS ${COPY} (MESSAGES)`);
          if (!st.text().includes(`MESSAGES ${total})`)) {
            throw new Error(`${side.server.name}: the copy does not hold ${total} messages`);
          }
          await side.raw.command(`DELETE ${COPY}`);
        });
      }
      for (const side of sides) {
        const c = copies.get(side);
        results.push(row(side, 'copy', 'imported', c.ms, c.cpu));
      }
      return;
    }

    log(RESELECT ? 'fetch_one, reselect' : 'fetch_one');
    const fetchMs = new Map(sides.map((s) => [s, { ms: [], cpu: 0 }]));
    const firstMs = new Map(sides.map((s) => [s, { ms: [], cpu: 0 }]));
    const selMs = new Map(sides.map((s) => [s, { ms: [], cpu: 0 }]));
    for (let r = 0; r < ROUNDS; r++) {
      await each(sides, r, async (side) => {
        const f = fetchMs.get(side);
        const c0 = serverCpu(side);
        for (const m of side.picked) {
          f.ms.push((await side.raw.command(`UID FETCH ${m.uid} (BODY.PEEK[])`)).ms);
        }
        f.cpu += serverCpu(side) - c0;
        const g = firstMs.get(side);
        const c2 = serverCpu(side);
        for (const m of side.fresh.slice(r * MESSAGES, (r + 1) * MESSAGES)) {
          g.ms.push((await side.raw.command(`UID FETCH ${m.uid} (BODY.PEEK[])`)).ms);
        }
        g.cpu += serverCpu(side) - c2;
        if (!RESELECT) return;
        const s = selMs.get(side);
        const c1 = serverCpu(side);
        for (let i = 0; i < 10; i++) s.ms.push((await side.raw.command('SELECT INBOX')).ms);
        s.cpu += serverCpu(side) - c1;
      });
    }
    for (const side of sides) {
      const f = fetchMs.get(side);
      results.push(row(side, 'fetch_one', 'imported', f.ms, f.cpu, { item: 'BODY.PEEK[]' }));
      const g = firstMs.get(side);
      if (g.ms.length) {
        results.push(
          row(side, 'fetch_one_first', 'imported', g.ms, g.cpu, { item: 'BODY.PEEK[]' }),
        );
      }
      if (!RESELECT) continue;
      const s = selMs.get(side);
      results.push(row(side, 'reselect', 'imported', s.ms, s.cpu));
    }
    if (ONLY) return;

    log('STORE on the imported mailbox');
    for (const [request, set] of [
      ['store_1pct', one],
      ['store_20pct', fifth],
    ]) {
      for (const side of sides) {
        const { ms, cpu } = await stores(side, set, SAMPLES);
        results.push(row(side, request, 'imported', ms, cpu, { first: +ms[0].toFixed(3) }));
      }
    }

    log(`COPY of the whole mailbox, then STORE on the copy at once`);
    for (const side of sides) {
      await side.raw.command(`DELETE ${COPY}`).catch(() => {});
      await side.raw.command(`CREATE ${COPY}`);
      const c0 = serverCpu(side);
      const cp = await side.raw.command(`UID COPY 1:* ${COPY}`);
      results.push(row(side, 'copy', 'imported', [cp.ms], serverCpu(side) - c0));
      const sel = await side.raw.command(`SELECT ${COPY}`);
      if (sel.exists() !== total)
        throw new Error(`${side.server.name}: copy holds ${sel.exists()}`);
      results.push(row(side, 'select_after_copy', 'copied', [sel.ms], null));
      for (const [request, set] of [
        ['store_1pct', one],
        ['store_20pct', fifth],
      ]) {
        const { ms, cpu } = await stores(side, set, SAMPLES);
        results.push(row(side, request, 'copied', ms, cpu, { first: +ms[0].toFixed(3) }));
      }
    }

    log('expunge 1% (and the purge) on the imported mailbox and on the copy');
    for (const [mailbox, label] of [
      ['INBOX', 'imported'],
      [COPY, 'copied'],
    ]) {
      for (const side of sides) {
        await side.raw.command(`SELECT ${mailbox}`);
        results.push(...(await expunge(side, mailbox, gone, label)));
      }
    }
  });
  for (const r of results) {
    r.size = SIZE;
    r.messages = SIZES[SIZE];
  }
  writeRun({ work: WORK, file: option(args, '--out', null), results });
}

module.exports = {
  description:
    'IMAP losses of issue 35.4 (fetch one, re-SELECT, STORE and expunge with purge, after COPY): mailgate vs Dovecot-maildir',
  usage:
    '[--size large] [--rounds 20] [--messages 20] [--samples 3] [--work DIR] [--out FILE] [--only fetch[,reselect]]',
  run: main,
  seqSet,
};
