'use strict';

const crypto = require('node:crypto');
const { errors, createProgress, canonicalMailboxName: canonicalName } = require('@mailgate/core');
const { ParsePool } = require('./pool');
const { planSources } = require('./plan');

/*
 * The import pipeline, in named stages:
 *   source  planSources (plan.js): files, trees, IMAP folders → plans with an item stream
 *   split   splitEntries: the reader's entries with their identity (sha256, occurrence),
 *           counted, the ones before the job's checkpoint passed over
 *   parse   parseBatch: derived columns from worker threads (pool.js), per-message budget
 *   batch   rowsOf: message rows for the store, quarantine rows for what is not mail
 *   store   BatchWriter: prepare and commit batches in source order, a checkpoint with each
 * Idempotent: a message is identified by (mailbox, sha256 of its bytes, n-th occurrence of
 * those bytes in the source), so a re-run stores nothing twice while genuine duplicates inside
 * one source (which a byte-exact export must reproduce) are kept. Resumable: a killed run
 * continues after its last checkpoint.
 */

const MAX_BATCH_BYTES = 8 * 1024 * 1024;
// Raw bytes imported between two merges of the GIN pending lists (issue 30.6). Batches append
// index entries to the pending lists (cheap, see commitBatch); a merge by gin_clean_pending_list
// hands the pages it frees to the index's free space map at once, so the next entries reuse
// them. Merged only at the end, the trigram index of the Enron set grew a 1 GB pending list
// whose pages stayed in the file: 1,156 MB for an index that CREATE INDEX builds in 128 MB.
// On a quarter of the set (41 MB): 429 MB merged at the end, 159 MB every 8 MB, 85 MB every
// 2 MB, 72 MB every 0.5 MB (its one-pass build: ~32 MB). Imports into a user who has mail;
// a first import rebuilds the indexes at its end instead (finishGinIndexes).
const GIN_MERGE_BYTES = 2 * 1024 * 1024;
// A first import of more mail than this rebuilds the GIN indexes at its end (one pass over the
// rows; seconds for a few MB, ~1 min for the Enron set) and stops merging once past it; a
// smaller one merges as it goes and at its end, like any other.
const GIN_REBUILD_BYTES = 4 * 1024 * 1024;
// Report sizes: the first entries are enough to act on; the rest is in the quarantine table.
const REPORT_LIST_LIMIT = 100;

/**
 * Imports mail into the store: reads sources in order, parses in worker threads, writes in
 * batched transactions with a checkpoint per batch. Items may carry their source's numbering
 * (`uidValidity`, `uid`, `uidNext`: IMAP folders, dovecot-uidlist); the store keeps it when it
 * can, else the report warns UIDS_NOT_KEPT.
 *
 * @param {object} opts
 * @param {import('@mailgate/store').PgStore} opts.store
 * @param {'mbox'|'maildir'|'mh'|'imap'} opts.kind
 * @param {object} [opts.imap] imap only: {host, port, login, passwordEnv, security} (see imap-source.js)
 * @param {boolean} [opts.mirrorExpunges] imap only: expunge imported messages gone upstream
 *   (`mailgate migrate`)
 * @param {string[]} opts.paths files (mbox) or one directory (maildir, mh)
 * @param {string} opts.user
 * @param {string} [opts.mailbox] mbox only: target mailbox
 * @param {string} [opts.variant] mbox only: force an mbox variant
 * @param {number} [opts.workers] parse worker threads (0 = inline)
 * @param {{timeMs?: number, memoryMb?: number}} [opts.parseBudget] per message (pool.js)
 * @param {number} [opts.batchSize]
 * @param {boolean} [opts.progress] show progress on stderr
 * @param {(w: {code: string, message: string}) => void} [opts.onWarning] told of a warning when
 *   it happens (IMPORT_WAITING), besides the report's `warnings`
 * @param {AbortSignal} [opts.signal] stops after the current batch (state stays resumable)
 * @param {(b: {messages: number, bytes: number}) => Promise<void>} [opts.onBatch] awaited after
 *   each batch is handed to the writer (progress; a caller that sleeps here slows the source)
 * @param {import('pino').Logger} [opts.log]
 * @returns {Promise<object>} the report (see README "import --json")
 */
async function runImport(opts) {
  const existed = await opts.store.getUser(opts.user).then(
    () => true,
    (err) => {
      if (err.code === 'USER_NOT_FOUND') return false;
      throw err;
    },
  );
  const run = new ImportRun(opts, await opts.store.ensureUser(opts.user));
  try {
    // Into a user with no mail yet (a first import) of more than GIN_REBUILD_BYTES: the GIN
    // indexes are built once at the end instead of merged as the import goes.
    run.bulk = Boolean(opts.store.userHasNoMail && (await opts.store.userHasNoMail(run.user.id)));
    for await (const plan of planSources({ ...opts, userId: run.user.id }, run.onSkip)) {
      await importPlan(run, plan);
      if (run.report.interrupted) break;
    }
    if (run.rebuilding()) await finishGinIndexes(run);
    if (!run.report.interrupted) await writeListSnapshots(run);
  } finally {
    await run.close();
  }
  // No thread pass over the user here: each batch commits with its thread ids (the store's
  // incremental thread stage), so memory follows the batch, not the mailbox.
  const report = run.finish();
  // A source without mail (most likely a wrong path) leaves no new, empty user behind: the
  // user this run created goes again (issue 30.8). A user that existed before is kept.
  const empty = !report.messages && !report.quarantined && !report.interrupted;
  if (!existed && empty && report.warnings.some((w) => w.code === 'NO_MAIL_FOUND')) {
    await opts.store.deleteUser(opts.user);
    report.userRemoved = true;
  } else if (!existed) {
    // The user this run made has no password: the CLI says how to give it one (30.7).
    report.userCreated = true;
  }
  return report;
}

/** One plan (a file, a tree, an IMAP folder) through split → parse → batch → store. */
async function importPlan(run, plan) {
  const { store, user, opts } = run;
  if (plan.totalBytes) run.progress.setTotalBytes(plan.totalBytes);
  if (plan.totalCount) run.progress.setTotal(plan.totalCount);
  const job = await store.startJob(user.id, opts.kind, plan.source, plan.mailboxKey);
  // One run of a job at a time (issue 30.3): a second run of the same import waits here, then
  // reads the checkpoint the first one left (none once it finished: it re-checks everything and
  // finds it present, allocating no uid).
  const release = await store.lockImportJob(job.id, () => run.waiting(plan.source));
  try {
    job.checkpoint = await store.jobCheckpoint(user.id, job.id);
    await importJob(run, plan, job);
  } finally {
    await release();
  }
}

/** importPlan's work once the job's lock is held. */
async function importJob(run, plan, job) {
  const { store, user, opts } = run;
  const resumeAt = (job.checkpoint && job.checkpoint.index) || 0;
  if (resumeAt) opts.log?.info({ source: plan.source, resumeAt }, 'resuming import');
  const writer = new BatchWriter(run, plan.source, job);
  const position = { lastIndex: resumeAt };
  let t = run.clock();
  for await (const batch of batches(splitEntries(run, plan.items, resumeAt, position), run)) {
    t = run.lap('readMs', t);
    await writer.write(batch);
    // The caller's pace and progress (a fleet migration: figures, the per-host message rate).
    if (opts.onBatch) {
      let bytes = 0;
      for (const it of batch) bytes += it.raw ? it.raw.length : 0;
      await opts.onBatch({ messages: batch.length, bytes });
    }
    t = run.clock();
    if (opts.signal && opts.signal.aborted) break;
  }
  if (opts.signal && opts.signal.aborted) {
    // The batch being read is dropped, not written: the checkpoint says where to resume.
    run.report.interrupted = true;
    await writer.drain();
    return;
  }
  t = run.clock();
  await writer.drain();
  t = run.lap('drainMs', t);
  await raiseKeptUidNexts(run);
  if (!run.rebuilding()) {
    await store.cleanGinPending(user.id);
    t = run.lap('ginMergeMs', t);
  }
  await store.analyzeUser(user.id);
  run.lap('analyzeMs', t);
  await store.finishJob(user.id, job.id, { messages: position.lastIndex + 1 });
}

/**
 * The end of a bulk import (a user who had no mail, more than GIN_REBUILD_BYTES of it; issue
 * 30.6): each GIN index rebuilt in one pass, the most compact it can be (a trigram index merged
 * batch after batch is 2-8 times that size), or, for a run that stopped early or imported
 * nothing, its pending list merged. A
 * rebuild that fails leaves the grown index working: the failure is logged, the pending list
 * merged, the import goes on.
 */
async function finishGinIndexes(run) {
  const { store, user, opts } = run;
  const t = run.clock();
  if (run.report.imported > 0 && !run.report.interrupted) {
    try {
      await store.rebuildGinIndexes(user.id);
      run.lap('ginRebuildMs', t);
      return;
    } catch (err) {
      opts.log?.warn({ code: err.code }, 'GIN index rebuild failed; merging its pending list');
    }
  }
  await store.cleanGinPending(user.id);
  run.lap('ginMergeMs', t);
}

/**
 * The list view of each mailbox the run added mail to, written once at the end (the store's
 * list snapshot): the first open after the import reads one row instead of every message. An
 * optimisation only: a failure is logged and counted in the report's warnings, the mail stays
 * imported.
 */
async function writeListSnapshots(run) {
  const { store, user, opts } = run;
  if (!store.writeListSnapshot) return;
  const t = run.clock();
  for (const name of run.written) {
    try {
      await store.writeListSnapshot(user.id, await run.mailboxId(name));
    } catch (err) {
      opts.log?.warn({ mailbox: name, code: err.code }, 'list snapshot not written');
      run.report.warnings.push({
        code: 'LIST_SNAPSHOT_FAILED',
        message: `The list view of ${name} was not saved; its first open reads every message`,
      });
    }
  }
  run.lap('snapshotMs', t);
}

/**
 * Once a source is read to its end: every mailbox still numbered as the source gets the
 * source's UIDNEXT (never below it), so uids the source handed out to messages since expunged
 * are not handed out again (the store's kept-uids.js; RFC 3501 2.3.1.1).
 */
async function raiseKeptUidNexts(run) {
  for (const [mailbox, n] of run.sourceNumbering) {
    await run.store.raiseKeptUidNext(
      run.user.id,
      await run.mailboxId(mailbox),
      Number(n.uidValidity),
      Number(n.uidNext),
    );
  }
  run.sourceNumbering.clear();
}

/**
 * Split stage: the reader's entries with their identity. Entries before the checkpoint were
 * stored by an earlier run: counted as duplicates, not parsed or written.
 */
async function* splitEntries(run, items, resumeAt, position) {
  const occurrences = new Map();
  for await (const it of items) {
    // The stored name (`inbox` is INBOX): the occurrence count below is per stored mailbox, so
    // an MH tree's root files and its `inbox` folder, both INBOX, number duplicates together.
    if (typeof it.mailbox === 'string') it.mailbox = canonicalName(it.mailbox);
    const raw = it.raw || Buffer.alloc(0);
    it.hash = crypto.createHash('sha256').update(raw).digest();
    const occKey = `${it.mailbox}\0${it.hash.toString('base64')}`;
    const seen = occurrences.get(occKey) || 0;
    // A source may name its own dedup ordinal (IMAP: the upstream UID, see imap-source.js).
    if (it.dup == null) it.dup = seen;
    occurrences.set(occKey, seen + 1);
    run.count(it.mailbox, raw.length, it.index < resumeAt);
    if (it.uidValidity != null && it.uidNext != null) {
      run.sourceNumbering.set(it.mailbox, { uidValidity: it.uidValidity, uidNext: it.uidNext });
    }
    position.lastIndex = it.index;
    if (it.index < resumeAt) {
      run.report.duplicates++;
      run.report.resumed++;
      run.stat(it.mailbox).duplicates++;
      continue;
    }
    yield it;
  }
}

/** Groups entries into batches of batchSize messages or MAX_BATCH_BYTES, whichever first. */
async function* batches(entries, run) {
  let batch = [];
  let bytes = 0;
  for await (const it of entries) {
    batch.push(it);
    bytes += it.raw ? it.raw.length : 0;
    if (batch.length >= run.batchSize || bytes >= MAX_BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
      if (run.opts.signal && run.opts.signal.aborted) return;
    }
  }
  if (batch.length && !(run.opts.signal && run.opts.signal.aborted)) yield batch;
}

/** Parse stage: derived columns of every readable entry, in order (reader errors skipped). */
function parseBatch(run, batch) {
  return run.pool.parseAll(batch.filter((it) => !it.error).map((it) => it.raw));
}

/**
 * Batch stage: message rows for the store and quarantine rows (raw bytes kept) for entries
 * that are not mail.
 */
async function rowsOf(run, source, batch, parsed) {
  const messages = [];
  const quarantined = [];
  let p = 0;
  for (const it of batch) {
    const res = it.error ? { ok: false, reason: 'reader', detail: it.error } : parsed[p++];
    if (res.ok) {
      messages.push({
        mailboxId: await run.mailboxId(it.mailbox),
        mailbox: it.mailbox,
        hash: it.hash,
        dup: it.dup,
        row: {
          ...res.row,
          internal_date: (it.internalDate || dateOr(res.row.date) || new Date()).toISOString(),
          flags: it.flags || [],
          keywords: it.keywords || [],
          source_name: it.sourceName,
        },
        source: { raw: it.raw, ...it.source },
        // The source's own numbering, kept where the store can (see the store's kept-uids.js).
        uidValidity: it.uidValidity ?? null,
        uid: it.uidValidity != null ? (it.uid ?? null) : null,
        uidNext: it.uidNext ?? null,
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
      run.quarantined(source, it, res);
    }
  }
  return { messages, quarantined };
}

/**
 * Store stage. Batches load concurrently (PostgreSQL then works on both cores) but commit in
 * source order; at most two are in flight while the next one is read and parsed.
 */
class BatchWriter {
  constructor(run, source, job) {
    this.run = run;
    this.source = source;
    this.job = job;
    this.writing = Promise.resolve();
  }

  async write(batch) {
    const { run } = this;
    const last = batch[batch.length - 1];
    const checkpoint = { index: last.index + 1 };
    if (last.offset != null) checkpoint.offset = last.offset;
    let t = run.clock();
    const parsed = await parseBatch(run, batch);
    t = run.lap('parseMs', t);
    const rows = await rowsOf(run, this.source, batch, parsed);
    const data = { ...rows, jobId: this.job.id, checkpoint };
    const plan = await run.store.prepareBatch(run.user.id, data);
    t = run.lap('prepareMs', t);
    const previous = this.writing;
    this.writing = run.store
      .commitBatch(run.user.id, plan, data, { after: previous })
      .then((r) => run.committed(r, data.messages));
    const bytes = batch.reduce((n, it) => n + (it.raw ? it.raw.length : 0), 0);
    run.unmerged += bytes;
    run.sentBytes += bytes;
    if (!run.rebuilding() && run.unmerged >= GIN_MERGE_BYTES) {
      // After this batch commits, one merge at a time, beside the next batches' loading.
      run.unmerged = 0;
      const committed = this.writing;
      run.merging = run.merging.then(() => committed.then(() => run.mergeGinPending()));
      run.merging.catch(() => {}); // surfaced by drain
    }
    this.writing.catch(() => {}); // surfaced by the next await
    await previous;
    run.lap('writeWaitMs', t);
  }

  async drain() {
    await this.writing;
    await this.run.merging;
  }
}

/** The state of one runImport call: user, parse pool, progress and the report. */
class ImportRun {
  constructor(opts, user) {
    this.opts = opts;
    this.store = opts.store;
    this.user = user;
    this.started = process.hrtime.bigint();
    this.cpuStart = process.cpuUsage();
    this.stages = {};
    this.threads = { closure: 0, assigned: 0, merged: 0 };
    this.batchSize = opts.batchSize || 250;
    this.unmerged = 0; // raw bytes written since the last GIN pending-list merge
    this.sentBytes = 0; // raw bytes sent to the store by this run
    this.bulk = false; // the user had no mail when the run began
    this.merging = Promise.resolve();
    this.pool = new ParsePool(opts.workers ?? 2, opts.parseBudget);
    this.progress = createProgress({
      label: `import ${opts.kind}`,
      enabled: opts.progress !== false,
    });
    this.report = {
      messages: 0,
      imported: 0,
      duplicates: 0,
      resumed: 0,
      quarantined: 0,
      skipped: 0,
      bytes: 0,
      seconds: 0,
      rate: 0,
      peakRssMB: 0,
      interrupted: false,
      mailboxes: [],
      quarantine: [],
      skippedFiles: [],
      warnings: [],
    };
    this.perMailbox = new Map();
    this.mailboxIds = new Map();
    this.written = new Set(); // mailboxes given new rows (writeListSnapshots)
    this.uidsNotKept = new Set();
    this.sourceNumbering = new Map(); // mailbox → the source's {uidValidity, uidNext}
    this.onSkip = (p, reason) => {
      this.report.skipped++;
      if (this.report.skippedFiles.length < REPORT_LIST_LIMIT)
        this.report.skippedFiles.push({ path: p, reason });
      opts.log?.debug({ path: p, reason }, 'skipped non-message file');
    };
  }

  stat(name) {
    if (!this.perMailbox.has(name)) {
      this.perMailbox.set(name, {
        mailbox: name,
        messages: 0,
        imported: 0,
        duplicates: 0,
        quarantined: 0,
      });
    }
    return this.perMailbox.get(name);
  }

  /** One source entry; `resumed`: before the checkpoint, done by an earlier run. */
  count(mailbox, bytes, resumed) {
    this.report.messages++;
    this.report.bytes += bytes;
    this.stat(mailbox).messages++;
    if (resumed) return this.progress.skip(1, bytes);
    if (this.freshSince == null) this.freshSince = process.hrtime.bigint();
    this.progress.tick(1, bytes);
  }

  async mailboxId(name) {
    if (!this.mailboxIds.has(name))
      this.mailboxIds.set(name, (await this.store.ensureMailbox(this.user.id, name)).id);
    return this.mailboxIds.get(name);
  }

  /** Whether this run will rebuild the GIN indexes at its end (GIN_REBUILD_BYTES). */
  rebuilding() {
    return this.bulk && this.sentBytes >= GIN_REBUILD_BYTES;
  }

  /** Merges the user's GIN pending lists now (see GIN_MERGE_BYTES), timed as ginMergeMs. */
  async mergeGinPending() {
    const t = this.clock();
    await this.store.cleanGinPending(this.user.id);
    this.lap('ginMergeMs', t);
  }

  /** Another run of the same import holds its lock: say so now and in the report. */
  waiting(source) {
    const w = new errors.IMPORT_WAITING(source, this.opts.user);
    const warning = { code: w.code, message: w.message };
    this.report.warnings.push(warning);
    if (this.opts.onWarning) this.opts.onWarning(warning);
    else this.opts.log?.warn({ source }, 'waiting for another import of the same source');
  }

  quarantined(source, it, res) {
    const entry = { source, position: it.position, reason: res.reason, detail: res.detail };
    if (this.report.quarantine.length < REPORT_LIST_LIMIT) this.report.quarantine.push(entry);
    this.stat(it.mailbox).quarantined++;
    this.opts.log?.warn({ source, position: it.position, reason: res.reason }, 'quarantined');
  }

  /** @returns {bigint} now, for lap() */
  clock() {
    return process.hrtime.bigint();
  }

  /** Adds the time since `t` to a stage of the report; returns now. */
  lap(stage, t) {
    const now = process.hrtime.bigint();
    this.stages[stage] = (this.stages[stage] || 0) + Number(now - t) / 1e6;
    return now;
  }

  committed(r, messages) {
    // The store's own split of a batch's transaction (they overlap the stages above: two
    // batches are in flight) and the thread stage's closure sizes.
    for (const [k, v] of Object.entries(r.timings || {}))
      this.stages[`db.${k}`] = (this.stages[`db.${k}`] || 0) + v;
    for (const [k, v] of Object.entries(r.threaded || {}))
      this.threads[k] = (this.threads[k] || 0) + v;
    for (const id of r.uidsNotKept || []) {
      const name = [...this.mailboxIds].find(([, v]) => v === id)?.[0];
      if (this.uidsNotKept.has(name)) continue;
      this.uidsNotKept.add(name);
      // The mailbox held other messages, or a source uid was below UIDNEXT: clients that
      // knew the source's uids resynchronise this mailbox once (new UIDVALIDITY).
      this.report.warnings.push({
        code: 'UIDS_NOT_KEPT',
        message: `The source's UIDs could not be kept in ${name}: its UIDVALIDITY differs from the source's`,
      });
      this.opts.log?.warn({ mailbox: name }, 'source uids not kept: new UIDVALIDITY');
    }
    this.report.imported += r.imported;
    this.report.duplicates += r.duplicates;
    this.report.quarantined += r.quarantined;
    // Per-mailbox duplicates = written attempts minus fresh rows.
    const attempted = new Map();
    for (const m of messages) attempted.set(m.mailbox, (attempted.get(m.mailbox) || 0) + 1);
    for (const [name, n] of attempted) {
      const fresh = r.perMailbox.get(this.mailboxIds.get(name)) || 0;
      if (fresh) this.written.add(name);
      this.stat(name).imported += fresh;
      this.stat(name).duplicates += n - fresh;
    }
  }

  async close() {
    await this.pool.close();
    this.progress.done();
  }

  finish() {
    const { report } = this;
    const end = process.hrtime.bigint();
    report.seconds = Number((Number(end - this.started) / 1e9).toFixed(3));
    // New work only: what a resumed run found done before its checkpoint was only re-hashed
    // (issue 30.9; `resumed` counts it, inside `duplicates`).
    const fresh = report.messages - report.resumed;
    const freshSecs = this.freshSince == null ? 0 : Number(end - this.freshSince) / 1e9;
    report.rate = freshSecs > 0 ? Number((fresh / freshSecs).toFixed(1)) : 0;
    // Worker threads share the process, so this covers parsing too (Linux: maxRSS in KiB).
    report.peakRssMB = Math.round(process.resourceUsage().maxRSS / 1024);
    // Where the time went (ms, wall; see README "import --json"): main-loop stages, then the
    // store's split of batch transactions (db.*), and this process's CPU (workers included).
    const cpu = process.cpuUsage(this.cpuStart);
    report.stages = Object.fromEntries(
      Object.entries({ ...this.stages, cpuMs: (cpu.user + cpu.system) / 1000 }).map(([k, v]) => [
        k,
        Math.round(v),
      ]),
    );
    report.threads = this.threads;
    report.mailboxes = [...this.perMailbox.values()];
    // A file source with no mail is most likely the wrong path: say so (a re-run of an
    // IMAP import that finds nothing new is normal and has messages = 0 too).
    if (report.messages === 0 && !report.interrupted && this.opts.kind !== 'imap') {
      const where = this.opts.paths.join(', ');
      const skipped = report.skipped ? ` (${report.skipped} files skipped, not mail)` : '';
      const w = new errors.NO_MAIL_FOUND(where, skipped);
      report.warnings.push({ code: w.code, message: w.message });
    }
    return report;
  }
}

function dateOr(iso) {
  return iso ? new Date(iso) : null;
}

module.exports = { runImport };
