'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const fsx = require('fs-native-extensions');
const { errors } = require('@mailgate/core');

/*
 * mbox locking, the way the other writers on the system take it. Owns the fcntl lock and the
 * dotlock of an mbox file; never reads or writes the mailbox itself.
 *
 * - fcntl (POSIX record) lock on the whole file: what Dovecot (mbox_read_locks = fcntl,
 *   mbox_write_locks = fcntl dotlock), procmail ("dotlocking, fcntl()") and mutt take. Node has
 *   no fcntl(); fs-native-extensions (a maintained N-API addon that ships prebuilt binaries, so
 *   nothing is compiled at install) takes Linux open-file-description locks (F_OFD_SETLK), which
 *   conflict with classic fcntl() record locks of other processes (fcntl(2)), and, unlike those,
 *   are not dropped when this process closes some other descriptor of the same file (a
 *   concurrent read in the same process would otherwise silently release a writer's lock) and
 *   do conflict between two descriptors of one process, so requests of one server exclude each
 *   other too.
 * - dotlock `FILE.lock`, linked from a temporary file holding `pid:host` (Dovecot's format, so that
 *   Dovecot breaks the lock of a dead mailgate at once instead of after its 2-minute
 *   mbox_dotlock_change_timeout).
 *
 * Order and deadlock: the other writers disagree (Dovecot takes fcntl then dotlock, procmail
 * dotlock then fcntl, each blocking on the second while holding the first). mailgate never
 * blocks while holding a lock: it tries fcntl, then the dotlock, and when either is taken by
 * someone else it releases what it holds and retries after a short sleep, until `timeoutMs`
 * (shorter than the HTTP request timeout) has passed; then MAILBOX_LOCKED. So it can lose a
 * race, never deadlock.
 *
 * Stale dotlocks (the fcntl lock of a dead process is released by the kernel): one naming a
 * pid on this host (`pid:host`, `pid host`, or a bare `pid` as liblockfile writes) whose
 * process is gone is broken at once; any other (procmail writes an empty one) when not modified
 * for STALE_MS, Dovecot's mbox_dotlock_change_timeout. A holder touches its lock every
 * TOUCH_MS so that a long rewrite is never taken for stale.
 */

const STALE_MS = 2 * 60 * 1000;
const TOUCH_MS = 10 * 1000;
const DEFAULT_WAIT_MS = 10 * 1000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Owner of a dotlock from its contents: `pid:host` (Dovecot, mailgate), `pid host` (older
 * mailgate), `pid` (liblockfile); anything else (procmail's empty lock) has no owner.
 * @param {string} text
 * @returns {{pid: number, host: string|null}|null}
 */
function lockOwner(text) {
  const m = /^\s*(\d+)(?:[:\s]+(\S+))?\s*$/.exec(text);
  if (!m || Number(m[1]) <= 0) return null;
  return { pid: Number(m[1]), host: m[2] || null };
}

/**
 * Why a dotlock may be broken, or null while it must be respected.
 * @param {string} lockPath
 * @param {number} [staleMs]
 * @returns {Promise<{reason: string, ino: number, mtimeMs: number}|null>}
 */
async function staleReason(lockPath, staleMs = STALE_MS) {
  let st;
  let text;
  try {
    st = await fsp.stat(lockPath);
    text = await fsp.readFile(lockPath, 'latin1');
  } catch {
    return null; // vanished: simply retry
  }
  const owner = lockOwner(text);
  if (owner && (!owner.host || owner.host === os.hostname()) && !alive(owner.pid)) {
    return { reason: `process ${owner.pid} is gone`, ino: st.ino, mtimeMs: st.mtimeMs };
  }
  if (Date.now() - st.mtimeMs > staleMs) {
    return { reason: `unchanged for ${staleMs} ms`, ino: st.ino, mtimeMs: st.mtimeMs };
  }
  return null;
}

/*
 * Removes a stale lock unless it was replaced since it was judged (a second breaker may have
 * removed it and a new holder created a fresh one in between): the window is the one between
 * this stat and the unlink, as in liblockfile and Dovecot.
 */
async function breakLock(lockPath, judged) {
  try {
    const st = await fsp.stat(lockPath);
    if (st.ino !== judged.ino || st.mtimeMs !== judged.mtimeMs) return;
    await fsp.unlink(lockPath);
  } catch {
    // already gone
  }
}

/*
 * The dotlock is written under a unique temporary name first and then linked to FILE.lock
 * (link(2) is atomic and fails with EEXIST when the lock is taken), the liblockfile way: a
 * writer killed at any point never leaves an empty FILE.lock, which other writers could only
 * break by age (2 minutes). The temporary names end in `.lock`, so Dovecot never lists them;
 * one left by a killed writer is removed by the next (cleanDotlockTemps). They name the host
 * as well as the pid (liblockfile does the same): on NFS, or across PID namespaces, a pid
 * alone cannot tell another host's live writer from a dead one here.
 */
function tryDotlock(lockPath) {
  const tmp = path.join(
    path.dirname(lockPath),
    `.${path.basename(lockPath)}.mailgate-dotlock-${process.pid}-${crypto.randomBytes(4).toString('hex')}-${HOST_TAG}.lock`,
  );
  fs.writeFileSync(tmp, `${process.pid}:${os.hostname()}`, { mode: 0o644, flag: 'wx' });
  try {
    fs.linkSync(tmp, lockPath);
    return true;
  } catch (err) {
    if (err.code === 'EEXIST') return false;
    // Our temporary removed under us (an older mailgate cleaning by pid alone): try again.
    if (err.code === 'ENOENT') return false;
    throw err;
  } finally {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}

// This host in a temporary's name: its characters kept to a safe set, its length bounded.
const HOST_TAG =
  os
    .hostname()
    .replace(/[^A-Za-z0-9.]/g, '_')
    .slice(0, 64) || 'host';

/**
 * Removes dotlock temporaries of writers on this host that died between writing and
 * unlinking them (names without a host are from mailgate before the host was named: taken as
 * this host's, as then).
 */
function cleanDotlockTemps(lockPath) {
  const dir = path.dirname(lockPath);
  const prefix = `.${path.basename(lockPath)}.mailgate-dotlock-`;
  let names = [];
  try {
    names = fs.readdirSync(dir).filter((n) => n.startsWith(prefix) && n.endsWith('.lock'));
  } catch {
    return;
  }
  for (const n of names) {
    const [pidText, , ...host] = n.slice(prefix.length, -'.lock'.length).split('-');
    if (host.length && host.join('-') !== HOST_TAG) continue;
    const pid = Number(pidText);
    if (pid > 0 && pid !== process.pid && !alive(pid)) {
      try {
        fs.unlinkSync(path.join(dir, n));
      } catch {
        // another writer removed it
      }
    }
  }
}

/**
 * Takes the write locks of an mbox file (fcntl, then dotlock; see the module comment).
 * @param {string} file the mbox file
 * @param {{timeoutMs?: number, name?: string, staleMs?: number, logger?: object}} [opts]
 *   name: the mailbox name for the MAILBOX_LOCKED message (never the path)
 * @returns {Promise<{fd: number, release: () => Promise<void>}>} fd: the file opened
 *   read-write, holding the fcntl lock until release
 */
async function lockMailbox(file, opts = {}) {
  const lockPath = `${file}.lock`;
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_WAIT_MS);
  cleanDotlockTemps(lockPath);
  const fd = fs.openSync(file, 'r+');
  let ok = false;
  try {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      if (fsx.tryLock(fd)) {
        if (tryDotlock(lockPath)) {
          ok = true;
          break;
        }
        fsx.unlock(fd);
        const stale = await staleReason(lockPath, opts.staleMs);
        if (stale) {
          if (opts.logger) opts.logger.warn({ lock: lockPath, why: stale.reason }, 'stale dotlock');
          await breakLock(lockPath, stale);
          continue;
        }
      }
      if (Date.now() > deadline) throw new errors.MAILBOX_LOCKED(opts.name || 'mailbox');
      await sleep(wait + Math.floor(Math.random() * wait));
    }
  } finally {
    if (!ok) fs.closeSync(fd);
  }
  const touch = setInterval(() => {
    const now = new Date();
    fs.utimes(lockPath, now, now, () => {});
  }, TOUCH_MS);
  touch.unref();
  let released = false;
  return {
    fd,
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(touch);
      // Dotlock first: a Dovecot blocked in F_SETLKW gets the fcntl lock next and then finds
      // the dotlock already gone.
      await fsp.unlink(lockPath).catch(() => {});
      fs.closeSync(fd); // closing the descriptor releases its OFD lock
    },
  };
}

/**
 * A shared fcntl lock for reading, as Dovecot's mbox_read_locks = fcntl: writers (which hold
 * the exclusive one) are waited for, other readers are not.
 * @param {string} file
 * @param {{timeoutMs?: number, name?: string}} [opts]
 * @returns {Promise<{fd: number, release: () => void}>} fd opened read-only; read through it
 */
async function readLock(file, opts = {}) {
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_WAIT_MS);
  const fd = fs.openSync(file, 'r');
  try {
    for (let wait = 5; !fsx.tryLock(fd, { shared: true }); wait = Math.min(wait * 2, 100)) {
      if (Date.now() > deadline) throw new errors.MAILBOX_LOCKED(opts.name || 'mailbox');
      await sleep(wait + Math.floor(Math.random() * wait));
    }
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  let released = false;
  return {
    fd,
    release: () => {
      if (released) return;
      released = true;
      fs.closeSync(fd);
    },
  };
}

module.exports = {
  lockMailbox,
  readLock,
  lockOwner,
  staleReason,
  STALE_MS,
  DEFAULT_WAIT_MS,
};
