'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

/*
 * Dovecot 2.3 on the built mbox or Maildir, as a server of the `imap` door (imap-door.js):
 * private instances started by @mailgate/dovecot (the project's launcher), one per load, each from a fresh
 * copy of the mail (hard links for a Maildir).
 *
 * `fts` (backend dovecot-maildir-fts, issue 35 item 2): the same Maildir with Dovecot's
 * full-text index (fts-xapian partial=3 full=20, fts_autoindex), built by `doveadm index`
 * before anything is timed. Building it costs ~20-30 ms of CPU per message (tens of minutes
 * for the large mailbox on a shared machine), so it is built once per mailbox and kept beside
 * the built mailbox (`<box>/dovecot-fts/`: Dovecot's index files, the xapian index, and
 * `index.json` with the build's wall time, CPU and size, which the import row reports).
 * A later load puts the kept index back, as a restart does (the mail files are the same).
 */

/** The index files Dovecot keeps in a Maildir (uid list, index, cache, xapian index). */
const maildirIndexFiles = (md) =>
  fs
    .readdirSync(md)
    .filter((f) => f.startsWith('dovecot') || f === 'xapian-indexes')
    .map((f) => path.join(md, f));

/**
 * @param {'mbox'|'maildir'} format
 * @param {{fts?: boolean}} [opts]
 * @returns {{name: string, start: Function, stop: Function, restart: Function, loadInfo: Function}}
 */
function dovecotServer(format, opts = {}) {
  const fts = Boolean(opts.fts);
  let inst = null;
  let box = null;
  let info = null;
  const endpoint = () => ({
    host: inst.host,
    port: inst.port,
    user: inst.user,
    password: inst.password,
  });
  const start = async (b) => {
    box = b;
    inst = await dovecot.start({
      format,
      mail: format === 'mbox' ? box.mbox : box.maildir,
      link: format === 'maildir',
      fts,
    });
    // Every start (load, restore after an expunge, restart) finds the pristine full-text
    // index: without it fts_enforced would index on demand inside a timed search.
    if (fts && fs.existsSync(manifest())) putBack(keptDir(), path.join(inst.home, 'Maildir'));
    return endpoint();
  };
  const keptDir = () => path.join(path.dirname(box.maildir), 'dovecot-fts');
  const manifest = () => path.join(keptDir(), 'index.json');
  // The full-text index: the kept one put back, else built now (untimed by the door's clock,
  // reported in the import row) and kept.
  const ftsIndex = async () => {
    const kept = keptDir();
    const md = path.join(inst.home, 'Maildir');
    // Another process building this mailbox's index (a build started ahead of a run): wait
    // for it instead of a second build of tens of minutes.
    const building = `${kept}.building`;
    let waited = false;
    while (!fs.existsSync(manifest()) && buildingPid(building)) {
      waited = true;
      await new Promise((r) => setTimeout(r, 5000));
    }
    if (waited && fs.existsSync(manifest())) {
      await stop();
      await start(box); // puts the kept index back
    }
    if (fs.existsSync(manifest())) {
      // Put back by start() already.
      info = { ...JSON.parse(fs.readFileSync(manifest(), 'utf8')), kept: true };
      return;
    }
    fs.writeFileSync(building, String(process.pid));
    let built;
    try {
      built = dovecot.index(inst.dir);
    } finally {
      fs.rmSync(building, { force: true });
    }
    info = {
      seconds: built.seconds,
      cpuSeconds: built.cpuSeconds,
      indexBytes: built.indexBytes,
      messages: box.count,
      builtAt: new Date().toISOString(),
      how: 'doveadm index -u USER INBOX (fts-xapian partial=3 full=20), CPU of doveadm from /proc',
    };
    const tmp = `${kept}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    for (const f of maildirIndexFiles(md)) {
      fs.cpSync(f, path.join(tmp, path.basename(f)), { recursive: true });
    }
    fs.writeFileSync(path.join(tmp, 'index.json'), JSON.stringify(info, null, 2) + '\n');
    fs.rmSync(kept, { recursive: true, force: true });
    fs.renameSync(tmp, kept);
    info.kept = false;
  };
  // Copies kept index files into a Maildir of the (stopped or not yet indexed) instance.
  const putBack = (from, into) => {
    const { uid, gid } = fs.statSync(inst.home);
    for (const f of fs.readdirSync(from)) {
      if (f === 'index.json') continue;
      const dst = path.join(into, f);
      fs.rmSync(dst, { recursive: true, force: true });
      fs.cpSync(path.join(from, f), dst, { recursive: true });
      chownTree(dst, uid, gid);
    }
  };
  const stop = async () => {
    if (inst) await dovecot.stop(inst.dir, { keep: false });
    inst = null;
  };
  return {
    name: `dovecot-${format}${fts ? '-fts' : ''}`,
    start,
    stop,
    /** First load: the full-text index (kept or built) before anything is timed. */
    /** @returns {object} the endpoint, which changes when the server had to restart */
    async prepare() {
      if (fts && !info) await ftsIndex();
      return endpoint();
    },
    /** What the load cost beyond the copy and start (the fts index), for the import row. */
    loadInfo() {
      return info ? { ftsIndex: info } : null;
    },
    /** The instance's master (its children: imap, auth, ... are its tree), for CPU from /proc. */
    pids() {
      const ps = inst ? dovecot.processes(inst.dir) : [];
      return ps.length ? [ps[0]] : [];
    },
    async restart() {
      // Every start is from a fresh copy of the mail, so the index Dovecot keeps beside it is
      // saved before the stop and put back before the first login: the restarted server finds
      // its index, as a real one would. The mailbox is pristine here (restored), so the saved
      // index matches the new copy.
      const saved = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-index-'));
      const indexFiles = () =>
        format === 'mbox'
          ? [path.join(inst.home, 'mail', '.imap')]
          : maildirIndexFiles(path.join(inst.home, 'Maildir'));
      // The full-text index is not saved: start() puts the kept pristine one back (the
      // mailbox is pristine here), and copying ~600 MB out and in cost ~20 s a cold sample.
      const keep = indexFiles().filter(
        (f) => fs.existsSync(f) && !(fts && path.basename(f) === 'xapian-indexes'),
      );
      for (const f of keep) fs.cpSync(f, path.join(saved, path.basename(f)), { recursive: true });
      await stop();
      await start(box);
      const { uid, gid } = fs.statSync(inst.home);
      const into =
        format === 'mbox' ? path.join(inst.home, 'mail') : path.join(inst.home, 'Maildir');
      for (const f of keep) {
        const dst = path.join(into, path.basename(f));
        fs.cpSync(path.join(saved, path.basename(f)), dst, { recursive: true });
        chownTree(dst, uid, gid);
      }
      fs.rmSync(saved, { recursive: true, force: true });
      return {
        endpoint: endpoint(),
        how: 'new Dovecot master (dovecot -c) on a fresh hard-linked/copied mail tree with its saved index; page cache dropped',
      };
    },
  };
}

/** pid in a build marker file, when that process still runs; else null. */
function buildingPid(file) {
  let pid;
  try {
    pid = Number(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** chown -R, for index files copied back into a Dovecot home. */
function chownTree(p, uid, gid) {
  fs.chownSync(p, uid, gid);
  if (fs.statSync(p).isDirectory()) {
    for (const e of fs.readdirSync(p)) chownTree(path.join(p, e), uid, gid);
  }
}

module.exports = { dovecotServer };
