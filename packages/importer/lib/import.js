'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { errors, createProgress } = require('@mailgate/core');
const { ParsePool } = require('./pool');
const { mboxItems, maildirItems, mhItems, mailboxForMboxFile, imapPlans } = require('./sources');

const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Imports mail into the store: reads sources in order, parses in worker threads, writes in
 * batched transactions with a checkpoint per batch. Idempotent: a message is identified by
 * (mailbox, sha256 of its bytes, n-th occurrence of those bytes in the source), so a re-run
 * stores nothing twice while genuine duplicates inside one source (which a byte-exact export
 * must reproduce) are kept. Resumable: a killed run continues after its last checkpoint.
 *
 * @param {object} opts
 * @param {import('@mailgate/store').PgStore} opts.store
 * @param {'mbox'|'maildir'|'mh'|'imap'} opts.kind
 * @param {object} [opts.imap] imap only: {host, port, login, passwordEnv, tls} (see imap-source.js)
 * @param {string[]} opts.paths files (mbox) or one directory (maildir, mh)
 * @param {string} opts.user
 * @param {string} [opts.mailbox] mbox only: target mailbox
 * @param {string} [opts.variant] mbox only: force an mbox variant
 * @param {number} [opts.workers] parse worker threads (0 = inline)
 * @param {{timeMs: number, memoryMb: number}} [opts.parseBudget] per message (default: config)
 * @param {number} [opts.batchSize]
 * @param {boolean} [opts.progress] show progress on stderr
 * @param {AbortSignal} [opts.signal] stops after the current batch (state stays resumable)
 * @param {import('pino').Logger} [opts.log]
 * @returns {Promise<object>} the report (see README "import --json")
 */
async function runImport(opts) {
  const { store, kind } = opts;
  const started = process.hrtime.bigint();
  const user = await store.ensureUser(opts.user);
  const pool = new ParsePool(opts.workers ?? 2, opts.parseBudget);
  const batchSize = opts.batchSize || 250;
  const report = {
    messages: 0,
    imported: 0,
    duplicates: 0,
    quarantined: 0,
    skipped: 0,
    bytes: 0,
    seconds: 0,
    rate: 0,
    peakRssMB: 0,
    interrupted: false,
    mailboxes: [],
    quarantine: [],
  };
  const perMailbox = new Map();
  const mailboxIds = new Map();
  const stat = (name) => {
    if (!perMailbox.has(name)) {
      perMailbox.set(name, {
        mailbox: name,
        messages: 0,
        imported: 0,
        duplicates: 0,
        quarantined: 0,
      });
    }
    return perMailbox.get(name);
  };
  const progress = createProgress({ label: `import ${kind}`, enabled: opts.progress !== false });

  try {
    for await (const { source, mailboxKey, items, totalBytes, totalCount } of planSources({
      ...opts,
      userId: user.id,
    })) {
      if (totalBytes) progress.setTotalBytes(totalBytes);
      if (totalCount) progress.setTotal(totalCount);
      const job = await store.startJob(user.id, kind, source, mailboxKey);
      const resumeAt = (job.checkpoint && job.checkpoint.index) || 0;
      if (resumeAt && opts.log) opts.log.info({ source, resumeAt }, 'resuming import');
      const occurrences = new Map();
      let batch = [];
      let batchBytes = 0;
      let writing = Promise.resolve();
      let lastIndex = resumeAt;

      const flush = async () => {
        const current = batch;
        batch = [];
        batchBytes = 0;
        if (!current.length) return;
        const checkpoint = { index: current[current.length - 1].index + 1 };
        if (current[current.length - 1].offset != null)
          checkpoint.offset = current[current.length - 1].offset;
        const parsed = await pool.parseAll(current.filter((it) => !it.error).map((it) => it.raw));
        // Batches load concurrently (PostgreSQL then works on both cores) but commit in
        // source order; at most two are in flight while the next one is read and parsed.
        const { plan, data } = await writeBatch(current, parsed, checkpoint);
        const previous = writing;
        writing = store
          .commitBatch(user.id, plan, data, { after: previous })
          .then((r) => account(r, data.messages));
        writing.catch(() => {}); // surfaced by the next await
        await previous;
      };

      const writeBatch = async (items, parsed, checkpoint) => {
        const messages = [];
        const quarantined = [];
        let p = 0;
        for (const it of items) {
          const res = it.error ? { ok: false, reason: 'reader', detail: it.error } : parsed[p++];
          if (res.ok) {
            const mailboxId = await mailboxIdFor(it.mailbox);
            messages.push({
              mailboxId,
              mailbox: it.mailbox,
              hash: it.hash,
              dup: it.dup,
              row: {
                ...res.row,
                internal_date: (
                  it.internalDate ||
                  dateOr(res.row.date) ||
                  new Date()
                ).toISOString(),
                flags: it.flags || [],
                keywords: it.keywords || [],
                source_name: it.sourceName,
              },
              source: { raw: it.raw, ...it.source },
            });
          } else {
            quarantined.push({
              mailbox: it.mailbox,
              source,
              position: it.position,
              reason: res.reason,
              detail: res.detail,
              raw: it.raw || Buffer.alloc(0),
              content_hash: it.hash,
            });
            if (report.quarantine.length < 100) {
              report.quarantine.push({
                source,
                position: it.position,
                reason: res.reason,
                detail: res.detail,
              });
            }
            stat(it.mailbox).quarantined++;
            opts.log?.warn({ source, position: it.position, reason: res.reason }, 'quarantined');
          }
        }
        const data = { messages, quarantined, jobId: job.id, checkpoint };
        const plan = await store.prepareBatch(user.id, data);
        return { plan, data };
      };

      const account = (r, messages) => {
        report.imported += r.imported;
        report.duplicates += r.duplicates;
        report.quarantined += r.quarantined;
        // Per-mailbox duplicates = written attempts minus fresh rows.
        const attempted = new Map();
        for (const m of messages) attempted.set(m.mailbox, (attempted.get(m.mailbox) || 0) + 1);
        for (const [name, n] of attempted) {
          const fresh = r.perMailbox.get(mailboxIds.get(name)) || 0;
          stat(name).imported += fresh;
          stat(name).duplicates += n - fresh;
        }
      };

      const mailboxIdFor = async (name) => {
        if (!mailboxIds.has(name))
          mailboxIds.set(name, (await store.ensureMailbox(user.id, name)).id);
        return mailboxIds.get(name);
      };

      for await (const it of items) {
        const raw = it.raw || Buffer.alloc(0);
        it.hash = crypto.createHash('sha256').update(raw).digest();
        const occKey = `${it.mailbox}\0${it.hash.toString('base64')}`;
        const seen = occurrences.get(occKey) || 0;
        // A source may name its own dedup ordinal (IMAP: the upstream UID, see imap-source.js).
        if (it.dup == null) it.dup = seen;
        occurrences.set(occKey, seen + 1);
        report.messages++;
        report.bytes += raw.length;
        stat(it.mailbox).messages++;
        lastIndex = it.index;
        if (it.index < resumeAt) {
          report.duplicates++;
          stat(it.mailbox).duplicates++;
          progress.tick(1, raw.length);
          continue;
        }
        batch.push(it);
        batchBytes += raw.length;
        progress.tick(1, raw.length);
        if (batch.length >= batchSize || batchBytes >= MAX_BATCH_BYTES) {
          await flush();
          if (opts.signal && opts.signal.aborted) break;
        }
      }
      if (opts.signal && opts.signal.aborted) {
        report.interrupted = true;
        await writing;
        break;
      }
      await flush();
      await writing;
      await store.cleanGinPending(user.id);
      await store.analyzeUser(user.id);
      await store.finishJob(job.id, { messages: lastIndex + 1 });
    }
  } finally {
    await pool.close();
    progress.done();
  }
  report.seconds = Number((Number(process.hrtime.bigint() - started) / 1e9).toFixed(3));
  report.rate = report.seconds > 0 ? Number((report.messages / report.seconds).toFixed(1)) : 0;
  // Worker threads share the process, so this covers parsing too (Linux: maxRSS in KiB).
  report.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
  report.mailboxes = [...perMailbox.values()];
  return report;
}

function dateOr(iso) {
  return iso ? new Date(iso) : null;
}

async function* planSources(opts) {
  const onSkip = (p, reason) => opts.log?.debug({ path: p, reason }, 'skipped non-message file');
  if (opts.kind === 'imap') {
    yield* imapPlans(opts);
    return;
  }
  if (opts.kind === 'mbox') {
    for (const file of opts.paths) {
      const abs = path.resolve(file);
      let st;
      try {
        st = fs.statSync(abs);
      } catch (err) {
        throw new errors.SOURCE_NOT_FOUND(
          file,
          err.code === 'ENOENT' ? 'no such file' : err.message,
        );
      }
      if (!st.isFile()) throw new errors.SOURCE_NOT_FOUND(file, 'not a regular file');
      const mailbox = opts.mailbox || mailboxForMboxFile(abs);
      yield {
        source: abs,
        mailboxKey: mailbox,
        totalBytes: st.size,
        items: mboxItems(abs, { mailbox, variant: opts.variant }),
      };
    }
    return;
  }
  if (opts.paths.length !== 1)
    throw new errors.USAGE(`import ${opts.kind} takes exactly one directory`);
  const abs = path.resolve(opts.paths[0]);
  let st;
  try {
    st = fs.statSync(abs);
  } catch (err) {
    throw new errors.SOURCE_NOT_FOUND(
      opts.paths[0],
      err.code === 'ENOENT' ? 'no such directory' : err.message,
    );
  }
  if (!st.isDirectory()) throw new errors.SOURCE_NOT_FOUND(opts.paths[0], 'not a directory');
  const items = opts.kind === 'maildir' ? maildirItems(abs, { onSkip }) : mhItems(abs, { onSkip });
  // A directory walk without reading files is cheap next to the import and gives the
  // progress bar a total (and so an ETA); non-message files make it a slight overestimate.
  yield { source: abs, mailboxKey: '', totalBytes: null, totalCount: countFiles(abs), items };
}

function countFiles(dir) {
  let n = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.name.startsWith('.') && e.isFile()) continue;
    if (e.isDirectory()) n += e.name === 'tmp' ? 0 : countFiles(path.join(dir, e.name));
    else if (e.isFile() && !/^(dovecot|courier)/.test(e.name)) n++;
  }
  return n;
}

module.exports = { runImport };
