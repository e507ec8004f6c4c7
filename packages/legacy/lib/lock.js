'use strict';

const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const { errors } = require('@mailgate/core');

/*
 * mbox locking. The traditional pair is a dotlock (`FILE.lock`, created O_EXCL: the only
 * lock that works over old NFS and that mutt, procmail, UW-IMAP and Dovecot all honour) plus
 * fcntl() on the file. Node has no fcntl()/flock(), so mailgate takes the dotlock only, and
 * is correct against every writer that also dotlocks (Dovecot's default mbox_write_locks is
 * "fcntl dotlock": it takes both, so it waits for our dotlock). The lock file holds
 * "pid hostname"; a lock whose process is gone on this host, or older than STALE_MS (the
 * classic 5-minute rule of liblockfile / Dovecot's mbox_dotlock_change_timeout), is broken.
 */

const STALE_MS = 5 * 60 * 1000;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

async function isStale(lockPath) {
  let text;
  let st;
  try {
    st = await fsp.stat(lockPath);
    text = await fsp.readFile(lockPath, 'utf8');
  } catch {
    return false; // vanished: simply retry
  }
  if (Date.now() - st.mtimeMs > STALE_MS) return true;
  const [pid, host] = text.trim().split(/\s+/);
  return host === os.hostname() && Number(pid) > 0 && !alive(Number(pid));
}

/**
 * Takes the dotlock of `file`, waiting up to `timeoutMs`.
 * @param {string} file the mbox file
 * @param {{timeoutMs?: number}} [opts]
 * @returns {Promise<() => Promise<void>>} release
 */
async function dotlock(file, opts = {}) {
  const lockPath = `${file}.lock`;
  const deadline = Date.now() + (opts.timeoutMs ?? 30000);
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    try {
      const fd = fs.openSync(
        lockPath,
        fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY,
        0o644,
      );
      fs.writeSync(fd, `${process.pid} ${os.hostname()}\n`);
      fs.closeSync(fd);
      return async () => {
        await fsp.unlink(lockPath).catch(() => {});
      };
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    if (await isStale(lockPath)) {
      await fsp.unlink(lockPath).catch(() => {});
      continue;
    }
    if (Date.now() > deadline) throw new errors.MAILBOX_LOCKED(file);
    await new Promise((r) => setTimeout(r, wait));
  }
}

module.exports = { dotlock, STALE_MS };
