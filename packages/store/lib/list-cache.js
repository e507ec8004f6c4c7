'use strict';

/*
 * The per-mailbox list cache: a mailbox's header rows kept in memory and exact by modseq,
 * which is what Dovecot's index cache is to its mail files. A header scan of a 21,282-message
 * mailbox costs ~15 ms of PostgreSQL time but ~300+ ms in the driver (text[] and timestamp
 * parsing, one object per row); with the cache the repeat scan costs one primary-key read of
 * the mailbox row.
 *
 * Exactness. Every change to a mailbox's messages bumps `mailboxes.highestmodseq` in the same
 * transaction and stamps the changed rows with it (imports, appends, flag changes, expunge's
 * hide, restoreExpunged); the purge only deletes rows hidden before. The mailbox row is locked
 * by the writer until commit, so a committed highestmodseq M means every row change <= M is
 * committed. Imports are the one exception: prepareBatch allocates a batch's uids and modseq in
 * a transaction of its own, before the rows exist, so a scan in between holds the mailbox as
 * exact without them; the batch's commit moves HIGHESTMODSEQ once more (import-ops
 * commitBatch), so the next scan sees a changed stamp; rows stamped at or below the modseq it
 * held are missed by the delta, and the count check of step 2 then reloads. A scan therefore:
 *   1. reads the mailbox row (uidvalidity, highestmodseq); unchanged -> the cached rows;
 *   2. changed -> in one REPEATABLE READ snapshot, the rows with modseq > cached (hidden ones
 *      are removed, visible ones replace or join) and the visible row count; a count that does
 *      not match after the delta (a hide and its purge both since the last scan) -> full reload.
 * Another process's changes are seen the same way: nothing here trusts local notifications.
 *
 * Persisted snapshot (option `persist`, the list view's cache only): what dovecot.index.cache
 * is to Dovecot, so that a service started with empty memory does not build every row through
 * the driver (Enron large: 21,282 list rows, 215-365 ms cold). A full load first reads the
 * mailbox's row in `list_snapshots` (its rows as JSON at some modseq S, in the same snapshot
 * as the mailbox row); used only at the mailbox's UIDVALIDITY and the cache's format. When S
 * is the mailbox's HIGHESTMODSEQ the rows are exact as they are, by the invariant above: every
 * change since stamps a modseq > S and bumps HIGHESTMODSEQ past S, and the purge deletes only
 * rows already hidden at a modseq <= HIGHESTMODSEQ = S, which a snapshot at S never holds
 * (it holds visible rows only). Otherwise the snapshot is caught up like an in-memory entry
 * (applyDelta, with its count check), or the rows are read by SQL. Written in the background
 * after a full SQL load and once the rows changed since the stored snapshot reach
 * max(1000, 10% of the list), never backwards (a write at a lower modseq is a no-op).
 *
 * Memory is bounded by MAILGATE_LIST_CACHE_ROWS (rows over all cached mailboxes, least
 * recently used evicted first; 0 disables). Cached rows are frozen: callers share them.
 *
 * This module runs SQL, so it lives in the store (the only SQL owner).
 */

const { isName, mailboxWhere } = require('./mailbox-ref');
const { ndjsonLine } = require('./header-row');

// NDJSON chunks are about this many characters (64 KB). The API cuts a stream whose socket
// has not drained for its stall timeout (api streams.js), and one chunk must drain well within
// it for a slow but reading client: 64 KB at 6.4 KB/s takes 10 s, 1 MB would need 100 KB/s.
const CHUNK_CHARS = 1 << 16;
// Bytes of whole NDJSON bodies kept (ndjsonChunks): two mailboxes of ~21,000 rows.
const BODY_BYTES = 48 * 1024 * 1024;

// Date order (the API's `order=date`): the Date header, else INTERNALDATE (an indexed
// expression), then uid; a keyset position holds the date as text at PostgreSQL's microsecond
// precision (a JS Date would round to milliseconds and skip or repeat rows at a page boundary).
const SORT_DATE = 'coalesce(m.date, m.internal_date)';
const SORT_DATE_TEXT = `to_char(${SORT_DATE} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
// Cached rows carry that text (beside the row, never in it) and whether it orders like the
// timestamp: fixed width, years 1000-9999 (to_char has no era, and a fifth digit breaks the
// width). A mailbox with a row outside is paged in date order by SQL.
const DATE_KEY_COLUMNS = `${SORT_DATE_TEXT} AS sort_date,
  (${SORT_DATE} >= '1000-01-01T00:00:00Z' AND ${SORT_DATE} < '10000-01-01T00:00:00Z') AS sort_safe`;
// A keyset date the cache can compare as text: SORT_DATE_TEXT's own shape, in the safe years.
const DATE_TEXT = /^[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

const COUNT_SQL = `SELECT count(*)::int AS n FROM messages m
  WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged`;

// Rows changed since the stored snapshot (summed over deltas) that make a new one worth
// writing: at least this many, and at least SNAPSHOT_SHARE of the list.
const SNAPSHOT_ROWS = 1000;
const SNAPSHOT_SHARE = 0.1;

const SNAPSHOT_SQL = `SELECT modseq, rows, body FROM list_snapshots
  WHERE user_id = ? AND mailbox_id = ? AND uidvalidity = ? AND format = ? AND modseq <= ?`;

// Never backwards: a snapshot is replaced by a newer modseq, or at the same modseq by another
// format or UIDVALIDITY (a new listRow shape, or a UIDVALIDITY changed without a modseq, would
// otherwise leave a snapshot no load can use until the mailbox changes). written_at is the
// new row's default (now()), not now() in the SET: Citus refuses a function that is not
// IMMUTABLE in DO UPDATE SET, and no snapshot was ever saved there (citus.js).
const SAVE_SQL = `INSERT INTO list_snapshots AS s
    (user_id, mailbox_id, uidvalidity, modseq, format, rows, body)
  VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (user_id, mailbox_id) DO UPDATE
    SET uidvalidity = EXCLUDED.uidvalidity, modseq = EXCLUDED.modseq, format = EXCLUDED.format,
      rows = EXCLUDED.rows, body = EXCLUDED.body, written_at = EXCLUDED.written_at
    WHERE s.modseq < EXCLUDED.modseq OR (s.modseq = EXCLUDED.modseq
      AND (s.format <> EXCLUDED.format OR s.uidvalidity <> EXCLUDED.uidvalidity))`;

/**
 * Reads the mailbox's HIGHESTMODSEQ and UIDVALIDITY (0 when it is gone), then runs `read` in
 * the same REPEATABLE READ snapshot: whatever `read` returns is at least as new as that modseq.
 * @returns {Promise<object>} `{modseq, uidvalidity, ...read(trx, {modseq, uidvalidity})}`
 */
function inSnapshot(knex, userId, mailboxId, read) {
  return knex.transaction(
    async (trx) => {
      const mb = await trx('mailboxes')
        .select('highestmodseq', 'uidvalidity')
        .where({ user_id: userId, id: mailboxId })
        .first();
      const at = {
        modseq: Number(mb ? mb.highestmodseq : 0),
        uidvalidity: Number(mb ? mb.uidvalidity : 0),
      };
      return { ...at, ...(await read(trx, at)) };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

class ListCache {
  /**
   * @param {{maxRows: number, select: string, toRow: (r: object) => object,
   *   dateKeys?: boolean, queryOptions?: object,
   *   persist?: {format: number, pack?: Function, unpack?: Function}}} o
   *   select: the row's columns (alias m), toRow: the store's row builder; dateKeys: false
   *   for rows never paged in date order (datePage then always answers null); queryOptions:
   *   node-postgres options of the row reads (e.g. TEXT_TYPES, which toRow then parses);
   *   persist: keep a snapshot of the rows in `list_snapshots` (see the module comment), for
   *   rows that JSON round-trips exactly (plain strings, numbers, booleans, null, arrays and
   *   objects of them) and without date keys (a snapshot's rows carry none: date pages of them
   *   would go to SQL); format: the rows' shape, a snapshot of another format is not used;
   *   pack/unpack: a row as stored in the snapshot's JSON and back (unpack returns null for a
   *   value it cannot read: the snapshot is then not used); default the row itself
   */
  constructor(o) {
    this.maxRows = o.maxRows;
    this.select = o.dateKeys === false ? o.select : `${o.select}, ${DATE_KEY_COLUMNS}`;
    this.toRow = o.toRow;
    this.queryOptions = o.queryOptions || null;
    this.persist = o.persist
      ? {
          format: o.persist.format,
          pack: o.persist.pack || null,
          unpack: o.persist.unpack || ((row) => row),
        }
      : null;
    this.saves = new Map(); // key -> background snapshot write in flight (settle awaits it)
    this.toSave = new Map(); // key -> the newest snapshot waiting for that write
    // Cached row -> its SORT_DATE_TEXT (safe ones only), and row list -> its rows in date
    // order (built at the first date page of that list): both collected with their rows.
    this.sortDates = new WeakMap();
    this.dateOrders = new WeakMap();
    this.entries = new Map(); // `${userId}:${mailboxId}` -> entry, in LRU order
    this.rows = 0;
    // loads: full loads; snapshots: those a persisted snapshot served (as is or caught up by a
    // delta); saved / saveErrors / saveMs: background snapshot writes and the last one's time
    this.stats = { hits: 0, deltas: 0, loads: 0, snapshots: 0, saved: 0, saveErrors: 0, saveMs: 0 };
    this.tooLarge = new Set(); // mailboxes seen larger than the whole budget (bounded below)
    this.loading = new Map(); // background loads in flight (warm)
    this.fullLoads = new Map(); // full reads in flight, shared by concurrent callers
    this.names = new Map(); // `${userId}:${name}` -> mailbox id at the last read (cachedId)
    // NDJSON line per cached row. A cached row is frozen and replaced (never changed) when its
    // message changes, so a line never goes stale; it is collected with its row, which bounds
    // it by the row budget above (a line is about the size of its row).
    this.lines = new WeakMap();
    // Whole NDJSON bodies of recently streamed mailboxes, as sent (Buffers of ~64 KB), kept
    // while their row list is current: a repeat stream is only socket writes. Bounded by
    // BODY_BYTES over all mailboxes, least recently streamed dropped first.
    this.bodies = new Map(); // key -> {list, desc, chunks, bytes}
    this.bodyBytes = 0;
  }

  /**
   * The id of a mailbox (by id, or byName) whose rows are in memory, else null. For a name
   * this is only a hint of which path to take (the name → id seen by the last read): every
   * read still resolves the name in its own statement (rowsOf), so a rename or delete in
   * another session never makes a read hit the wrong mailbox.
   * @param {number} userId
   * @param {number|{name: string}} ref
   * @returns {number|null}
   */
  cachedId(userId, ref) {
    const id = isName(ref) ? this.names.get(`${userId}:${ref.name}`) : ref;
    return id != null && this.entries.has(`${userId}:${id}`) ? id : null;
  }

  /**
   * Whether the mailbox's rows are in memory (possibly not current: rowsOf checks).
   * @param {number} userId
   * @param {number} mailboxId
   */
  has(userId, mailboxId) {
    return this.entries.has(`${userId}:${mailboxId}`);
  }

  /**
   * The cached rows when they are exactly those of `modseq` (the caller read the mailbox's
   * HIGHESTMODSEQ in its own statement), else null. Reads nothing.
   * @returns {ReadonlyArray<object>|null}
   */
  current(userId, mailboxId, modseq) {
    const e = this.entries.get(`${userId}:${mailboxId}`);
    return e && e.modseq === modseq ? e.list : null;
  }

  /**
   * Loads a mailbox into the cache in the background (once at a time per mailbox), so that a
   * small page does not wait for the whole mailbox: the first page of a webmail list is read
   * by SQL while the cache fills for the next request.
   * @param {import('knex').Knex} knex
   * @param {number} userId
   * @param {number} mailboxId
   */
  /** Resolves once no background load, shared full read or snapshot write is in flight. */
  async settle() {
    while (this.loading.size || this.fullLoads.size || this.saves.size) {
      await Promise.allSettled([
        ...this.loading.values(),
        ...this.fullLoads.values(),
        ...this.saves.values(),
      ]);
    }
  }

  warm(knex, userId, mailboxId) {
    const key = `${userId}:${mailboxId}`;
    if (this.loading.has(key) || !this.usable(userId, mailboxId)) return;
    const p = this.rowsOf(knex, userId, mailboxId)
      .catch(() => {}) // a failed warm-up only means the next request reads SQL again
      .finally(() => this.loading.delete(key));
    this.loading.set(key, p);
  }

  /**
   * Whether a mailbox is worth serving from the cache for a cheap question (a count): not
   * when it is known to exceed the budget, which would make every call a full read.
   */
  usable(userId, mailboxId) {
    return !this.tooLarge.has(`${userId}:${mailboxId}`);
  }

  /**
   * All visible header rows of a mailbox in uid order, exact as of this call, or as of
   * `known`: the mailbox row (id, uidvalidity, highestmodseq) its caller read a moment ago, in
   * the same request, for the mailbox `ref` names. When the cached rows are at exactly that
   * state they are the answer without a read (an IMAP command checks the selected mailbox's
   * row first; reading it again here was a round trip per FETCH, STORE or SEARCH).
   * @param {import('knex').Knex} knex
   * @param {number} userId
   * @param {number|{name: string}} ref mailbox id, or byName(name)
   * @param {{id: number, uidvalidity: number, highestmodseq: number}|null} [known]
   * @returns {Promise<ReadonlyArray<object>|null>} null when the mailbox does not exist
   */
  async rowsOf(knex, userId, ref, known = null) {
    if (known) {
      const key = `${userId}:${Number(known.id)}`;
      const e = this.entries.get(key);
      if (
        e &&
        e.uidvalidity === Number(known.uidvalidity) &&
        e.modseq === Number(known.highestmodseq)
      ) {
        this.stats.hits++;
        this.touch(key, e);
        return e.list;
      }
    }
    // The mailbox row by id or by name, in one statement (mailbox-ref.js).
    const w = mailboxWhere(ref);
    const mb = (
      await knex.raw(
        `SELECT b.id, b.uidvalidity, b.highestmodseq FROM mailboxes b
          WHERE b.user_id = ? AND ${w.sql}`,
        [userId, w.value],
      )
    ).rows[0];
    if (isName(ref)) this.noteName(userId, ref.name, mb ? Number(mb.id) : null);
    if (!mb) {
      if (!isName(ref)) this.drop(`${userId}:${ref}`);
      return null;
    }
    const mailboxId = Number(mb.id);
    const key = `${userId}:${mailboxId}`;
    const modseq = Number(mb.highestmodseq);
    const uidvalidity = Number(mb.uidvalidity);
    let e = this.entries.get(key);
    if (e && e.uidvalidity === uidvalidity && e.modseq === modseq) {
      this.stats.hits++;
      this.touch(key, e);
      return e.list;
    }
    if (e && e.uidvalidity === uidvalidity && e.modseq < modseq) {
      e = await this.applyDelta(knex, userId, mailboxId, e);
      if (e) this.stats.deltas++;
    } else e = null;
    if (!e) {
      // One full load per mailbox at a time: a SELECT's count warms the cache in the background
      // while its uid list asks for the rows; two parallel reads of 21,282 rows cost twice.
      let p = this.fullLoads.get(key);
      if (!p) {
        p = this.load(knex, userId, mailboxId).finally(() => this.fullLoads.delete(key));
        this.fullLoads.set(key, p);
        this.stats.loads++;
      }
      e = await p;
      // A load that started before our read of the mailbox row may predate a change we saw.
      if (e.modseq < modseq) e = (await this.applyDelta(knex, userId, mailboxId, e)) || null;
      if (!e) {
        e = await this.load(knex, userId, mailboxId);
        this.stats.loads++;
      }
    }
    // e.uidvalidity is the one read with its rows (load, applyDelta), at least as new as ours.
    this.store(key, e);
    return e.list;
  }

  /**
   * Remembers (or forgets) which mailbox a name denoted at the last read that resolved it
   * (rowsOf, or a store statement by name): a hint for cachedId only.
   */
  noteName(userId, name, id) {
    const k = `${userId}:${name}`;
    if (id == null) this.names.delete(k);
    else if (this.names.get(k) !== id) {
      if (this.names.size >= 10000) this.names.clear();
      this.names.set(k, id);
    }
  }

  /**
   * A full load: from the persisted snapshot when there is a usable one (as is, or caught up
   * by a delta), else every row by SQL (and then a snapshot written in the background, unless
   * `save` is false).
   * @returns {Promise<{modseq: number, uidvalidity: number, list: object[], unsaved: number}>}
   */
  async load(knex, userId, mailboxId, snapshot = Boolean(this.persist), save = true) {
    const got = await inSnapshot(knex, userId, mailboxId, async (trx, at) => {
      if (snapshot && at.uidvalidity) {
        // A snapshot ahead of the mailbox cannot be (modseq only grows): not used if it were.
        const s = (
          await trx.raw(SNAPSHOT_SQL, [
            userId,
            mailboxId,
            at.uidvalidity,
            this.persist.format,
            at.modseq,
          ])
        ).rows[0];
        if (s) return { snap: s };
      }
      const r = await this.rowQuery(
        trx,
        `SELECT ${this.select} FROM messages m
          WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged ORDER BY m.uid`,
        [userId, mailboxId],
      );
      return { rows: r.rows };
    });
    if (got.snap) {
      const e = this.fromSnapshot(got.snap, got.uidvalidity);
      // Exact as is at the mailbox's modseq (module comment), else caught up like a cached entry.
      const exact =
        e && (e.modseq === got.modseq ? e : await this.applyDelta(knex, userId, mailboxId, e));
      if (exact) {
        this.stats.snapshots++;
        return exact;
      }
      return this.load(knex, userId, mailboxId, false);
    }
    const e = {
      modseq: got.modseq,
      uidvalidity: got.uidvalidity,
      list: got.rows.map((x) => this.rowOf(x)),
      unsaved: 0,
    };
    if (save && this.persist && got.uidvalidity) this.save(knex, userId, mailboxId, e);
    return e;
  }

  /**
   * Writes a mailbox's snapshot now, from its rows read by SQL, and waits for the write: after
   * an import the first open then reads one row instead of building the list (as Dovecot's
   * first open reads the index its delivery built). The rows are not kept in memory: the
   * process serving the mailbox is usually another one. A mailbox over the budget gets none
   * (its rows are counted first, so memory stays within the budget).
   * @returns {Promise<boolean>} whether the mailbox now has a snapshot at least this new
   */
  async writeSnapshot(knex, userId, mailboxId) {
    if (!this.persist) return false;
    const n = (await knex.raw(COUNT_SQL, [userId, mailboxId])).rows[0].n;
    if (n > this.maxRows) return false;
    // Written here, not in the background: the caller waits, and errors reach it.
    const e = await this.load(knex, userId, mailboxId, false, false);
    if (!e.uidvalidity || e.list.length > this.maxRows) return false;
    await this.writeRow(knex, userId, mailboxId, e);
    return true;
  }

  /**
   * The snapshot row of `s` ({modseq, uidvalidity, list}) upserted (SAVE_SQL: never over a
   * newer one).
   */
  async writeRow(knex, userId, mailboxId, s) {
    await knex.raw(SAVE_SQL, [
      userId,
      mailboxId,
      s.uidvalidity,
      s.modseq,
      this.persist.format,
      s.list.length,
      await jsonInSlices(s.list, this.persist.pack),
    ]);
  }

  /** An entry from a snapshot row read by load (parsed here, after its transaction), or null. */
  fromSnapshot(s, uidvalidity) {
    let rows;
    try {
      rows = JSON.parse(s.body);
    } catch {
      return null;
    }
    if (!Array.isArray(rows) || rows.length !== Number(s.rows)) return null;
    const same = (row) => row;
    const list = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = this.persist.unpack(rows[i]);
      if (!row) return null;
      list[i] = this.rowOf(row, same);
    }
    return { modseq: Number(s.modseq), uidvalidity, list, unsaved: 0 };
  }

  /**
   * Writes the entry's rows as the mailbox's snapshot, in the background: after the caller's
   * answer (setImmediate), one write per mailbox at a time, the newest waiting entry taken
   * next, serialized in slices (jsonInSlices). Never throws: a failed write only means the
   * next cold load reads more by SQL.
   */
  save(knex, userId, mailboxId, e) {
    // Larger than the budget: never cached, so never snapshotted either.
    if (e.list.length > this.maxRows) return;
    const key = `${userId}:${mailboxId}`;
    e.unsaved = 0;
    // The values now: the entry object may be relabelled by its caller later.
    this.toSave.set(key, { modseq: e.modseq, uidvalidity: e.uidvalidity, list: e.list });
    if (this.saves.has(key)) return; // the write in flight takes it when done
    const p = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      while (this.toSave.has(key)) {
        const s = this.toSave.get(key);
        this.toSave.delete(key);
        const t0 = process.hrtime.bigint();
        try {
          await this.writeRow(knex, userId, mailboxId, s);
          this.stats.saved++;
          this.stats.saveMs = Number(process.hrtime.bigint() - t0) / 1e6;
        } catch {
          this.stats.saveErrors++; // e.g. the mailbox deleted meanwhile (foreign key), pool gone
        }
      }
    })().finally(() => this.saves.delete(key));
    this.saves.set(key, p);
  }

  /** A statement that reads rows for toRow (with the cache's driver options). */
  rowQuery(trx, sql, bindings) {
    const q = trx.raw(sql, bindings);
    return this.queryOptions ? q.options(this.queryOptions) : q;
  }

  /**
   * A cached row from a SELECT row (or, with `build` the identity, a snapshot's parsed row):
   * frozen, its date key kept beside it.
   */
  rowOf(x, build = this.toRow) {
    const row = Object.freeze(build(x));
    if (isTrue(x.sort_safe) && x.sort_date) this.sortDates.set(row, x.sort_date);
    return row;
  }

  /**
   * A keyset page in date order — SORT_DATE, then uid, as the SQL page orders — out of a list
   * returned by rowsOf, with the SQL page's shape (`next.date` the same text); null when the
   * list cannot answer exactly (a row outside the safe years, or an `after` date not in
   * SORT_DATE_TEXT's shape): the caller pages by SQL.
   * @param {ReadonlyArray<object>} list
   * @param {{limit: number, desc?: boolean, after?: {uid: number, date?: string}|null}} opts
   * @returns {{rows: object[], next: {uid: number, date: string}|null}|null}
   */
  datePage(list, opts) {
    const sorted = this.dateOrder(list);
    if (!sorted) return null;
    const dates = this.sortDates;
    // <0, 0, >0 as row's (date, uid) is before, at, after (d, u)
    const cmp = (row, d, u) => {
      const rd = dates.get(row);
      return rd < d ? -1 : rd > d ? 1 : row.uid - u;
    };
    // first index whose row is after (d, u) (strict) or at-or-after it
    const bound = (d, u, strict) => {
      let a = 0;
      let b = sorted.length;
      while (a < b) {
        const mid = (a + b) >> 1;
        const c = cmp(sorted[mid], d, u);
        if (c < 0 || (strict && c === 0)) a = mid + 1;
        else b = mid;
      }
      return a;
    };
    let lo = 0;
    let hi = sorted.length; // the rows past the cursor are [lo, hi)
    const after = opts.after;
    if (after) {
      const u = Number(after.uid);
      if (!Number.isSafeInteger(u) || !validDateText(after.date)) return null;
      if (opts.desc) hi = bound(after.date, u, false);
      else lo = bound(after.date, u, true);
    }
    const n = Math.min(opts.limit, hi - lo);
    const rows = new Array(n);
    for (let i = 0; i < n; i++) rows[i] = opts.desc ? sorted[hi - 1 - i] : sorted[lo + i];
    const more = hi - lo > opts.limit;
    const last = rows[n - 1];
    return { rows, next: more && last ? { uid: last.uid, date: dates.get(last) } : null };
  }

  /** The list's rows in ascending date order (memoised per list), or null (see datePage). */
  dateOrder(list) {
    let sorted = this.dateOrders.get(list);
    if (sorted !== undefined) return sorted;
    const dates = this.sortDates;
    sorted = list.every((row) => dates.has(row)) ? [...list] : null;
    if (sorted) {
      sorted.sort((a, b) => {
        const da = dates.get(a);
        const db = dates.get(b);
        return da < db ? -1 : da > db ? 1 : a.uid - b.uid;
      });
    }
    this.dateOrders.set(list, sorted);
    return sorted;
  }

  /** The rows changed since the entry's modseq, applied to a copy; null when a reload is due. */
  async applyDelta(knex, userId, mailboxId, e) {
    const got = await inSnapshot(knex, userId, mailboxId, async (trx) => {
      const r = await this.rowQuery(
        trx,
        `SELECT ${this.select}, m.expunged FROM messages m
          WHERE m.user_id = ? AND m.mailbox_id = ? AND m.modseq > ? ORDER BY m.uid`,
        [userId, mailboxId, e.modseq],
      );
      const c = await trx.raw(COUNT_SQL, [userId, mailboxId]);
      return { changed: r.rows, count: c.rows[0].n };
    });
    const { modseq, changed, count } = got;
    // Another UIDVALIDITY: the uids of the entry mean nothing any more.
    if (got.uidvalidity !== e.uidvalidity) return null;
    // A large delta costs as much as a load: reload rather than merge. No changed row at all
    // means the mailbox moved without stamping rows (the thread stage's first thread ids):
    // reload too.
    if (changed.length > e.list.length / 2 || changed.length === 0) return null;
    const byUid = new Map();
    for (const x of changed) byUid.set(Number(x.uid), x);
    const list = [];
    for (const row of e.list) {
      const x = byUid.get(row.uid);
      if (!x) list.push(row);
      else {
        byUid.delete(row.uid);
        if (!isTrue(x.expunged)) list.push(this.rowOf(x));
      }
    }
    const added = [];
    for (const x of byUid.values()) if (!isTrue(x.expunged)) added.push(this.rowOf(x));
    if (added.length) {
      list.push(...added);
      // New uids are above the old ones, except a restored (un-hidden) message: keep uid order.
      if (e.list.length && added[0].uid < e.list[e.list.length - 1].uid) {
        list.sort((a, b) => a.uid - b.uid);
      }
    }
    if (list.length !== count) return null;
    const next = {
      modseq,
      list,
      uidvalidity: e.uidvalidity,
      unsaved: (e.unsaved || 0) + changed.length,
    };
    if (this.persist && next.unsaved >= Math.max(SNAPSHOT_ROWS, list.length * SNAPSHOT_SHARE)) {
      this.save(knex, userId, mailboxId, next);
    }
    return next;
  }

  /**
   * The NDJSON line (JSON and a newline) of a row returned by rowsOf.
   * @param {object} row
   * @returns {string}
   */
  lineOf(row) {
    let line = this.lines.get(row);
    if (line === undefined) {
      line = ndjsonLine(row);
      this.lines.set(row, line);
    }
    return line;
  }

  /**
   * The NDJSON body of a mailbox's rows (a list returned by rowsOf), chunk by chunk: the kept
   * chunks when this very list was streamed before, else built from lineOf and kept once
   * complete (a stream abandoned half-way keeps nothing).
   * @param {number} userId
   * @param {number} mailboxId
   * @param {ReadonlyArray<object>} list
   * @param {boolean} desc
   * @returns {Generator<Buffer>}
   */
  *ndjsonChunks(userId, mailboxId, list, desc) {
    const key = `${userId}:${mailboxId}`;
    const kept = this.bodies.get(key);
    if (kept && kept.list === list && kept.desc === desc) {
      this.bodies.delete(key);
      this.bodies.set(key, kept);
      yield* kept.chunks;
      return;
    }
    const chunks = [];
    let bytes = 0;
    const n = list.length;
    let i = 0;
    while (i < n) {
      let out = '';
      for (; i < n && out.length < CHUNK_CHARS; i++) out += this.lineOf(list[desc ? n - 1 - i : i]);
      const buf = Buffer.from(out);
      chunks.push(buf);
      bytes += buf.length;
      yield buf;
    }
    this.keepBody(key, { list, desc, chunks, bytes });
  }

  keepBody(key, body) {
    const old = this.bodies.get(key);
    if (old) {
      this.bodyBytes -= old.bytes;
      this.bodies.delete(key);
    }
    if (body.bytes > BODY_BYTES) return;
    this.bodies.set(key, body);
    this.bodyBytes += body.bytes;
    for (const [k, b] of this.bodies) {
      if (this.bodyBytes <= BODY_BYTES) break;
      this.bodies.delete(k);
      this.bodyBytes -= b.bytes;
    }
  }

  store(key, e) {
    const old = this.entries.get(key);
    if (old) this.rows -= old.list.length;
    this.entries.delete(key);
    if (e.list.length > this.maxRows) {
      // Larger than the whole budget: never cached, and remembered as such.
      if (this.tooLarge.size >= 10000) this.tooLarge.clear();
      this.tooLarge.add(key);
      return;
    }
    this.tooLarge.delete(key);
    this.entries.set(key, e);
    this.rows += e.list.length;
    for (const [k, v] of this.entries) {
      if (this.rows <= this.maxRows) break;
      this.entries.delete(k);
      this.rows -= v.list.length;
    }
  }

  touch(key, e) {
    this.entries.delete(key);
    this.entries.set(key, e);
  }

  drop(key) {
    this.keepBody(key, { bytes: Infinity });
    const old = this.entries.get(key);
    if (!old) return;
    this.rows -= old.list.length;
    this.entries.delete(key);
  }
}

// Rows serialized per event-loop turn by jsonInSlices: ~2 ms of JSON.stringify (Enron large).
const SLICE_ROWS = 1000;

/**
 * JSON.stringify(list) (of each row packed, with `pack`), a slice of rows per event-loop turn:
 * all 21,282 list rows of Enron large at once hold the loop ~40 ms, which the next request
 * (the first warm read after the load that wrote) would wait for.
 * @param {ReadonlyArray<object>} list
 * @param {Function|null} [pack] the row as stored (ListCache persist.pack)
 * @returns {Promise<string>}
 */
async function jsonInSlices(list, pack = null) {
  const parts = [];
  for (let i = 0; i < list.length; i += SLICE_ROWS) {
    if (i) await new Promise((resolve) => setImmediate(resolve));
    const slice = list.slice(i, i + SLICE_ROWS);
    parts.push(JSON.stringify(pack ? slice.map(pack) : slice).slice(1, -1));
  }
  return `[${parts.join(',')}]`;
}

/** A boolean column as parsed by the driver, or as PostgreSQL's text ('t') with TEXT_TYPES. */
const isTrue = (v) => v === true || v === 't';

/**
 * Whether a keyset date is SORT_DATE_TEXT of a real instant in the safe years (so that text
 * order is time order, and PostgreSQL would read it as that very instant).
 * @param {unknown} d
 */
function validDateText(d) {
  if (typeof d !== 'string' || !DATE_TEXT.test(d)) return false;
  const ms = Date.parse(d.slice(0, 23) + 'Z');
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 23) === d.slice(0, 23);
}

/**
 * A keyset page out of uid-ordered rows (the same semantics as the SQL scan).
 * @param {ReadonlyArray<{uid: number}>} list
 * @param {{limit?: number, afterUid?: number, order?: 'asc'|'desc'}} opts
 */
function pageOf(list, opts = {}) {
  const desc = opts.order === 'desc';
  let lo = 0;
  let hi = list.length; // [lo, hi) are the rows past the cursor
  if (opts.afterUid != null) {
    // first index with uid > afterUid
    let a = 0;
    let b = list.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (list[mid].uid <= opts.afterUid) a = mid + 1;
      else b = mid;
    }
    if (desc) {
      // rows with uid < afterUid
      hi = a > 0 && list[a - 1].uid === opts.afterUid ? a - 1 : a;
    } else lo = a;
  }
  const n = opts.limit ? Math.min(opts.limit, hi - lo) : hi - lo;
  if (!desc) return list.slice(lo, lo + n);
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = list[hi - 1 - i];
  return out;
}

module.exports = { ListCache, pageOf, jsonInSlices, SORT_DATE, SORT_DATE_TEXT };
