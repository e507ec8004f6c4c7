'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

/*
 * Dovecot 2.3 on the built mbox or Maildir, as a server of the `imap` door (imap-door.js):
 * private instances started by @mailgate/dovecot (the project's launcher), one per load, each from a fresh
 * copy of the mail (hard links for a Maildir).
 */

/**
 * @param {'mbox'|'maildir'} format
 * @returns {{name: string, start: Function, stop: Function, restart: Function}}
 */
function dovecotServer(format) {
  let inst = null;
  let box = null;
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
    });
    return endpoint();
  };
  const stop = async () => {
    if (inst) await dovecot.stop(inst.dir, { keep: false });
    inst = null;
  };
  return {
    name: `dovecot-${format}`,
    start,
    stop,
    async restart() {
      // Every start is from a fresh copy of the mail, so the index Dovecot keeps beside it is
      // saved before the stop and put back before the first login: the restarted server finds
      // its index, as a real one would. The mailbox is pristine here (restored), so the saved
      // index matches the new copy.
      const saved = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-index-'));
      const indexFiles = () =>
        format === 'mbox'
          ? [path.join(inst.home, 'mail', '.imap')]
          : fs
              .readdirSync(path.join(inst.home, 'Maildir'))
              .filter((f) => f.startsWith('dovecot'))
              .map((f) => path.join(inst.home, 'Maildir', f));
      const keep = indexFiles().filter((f) => fs.existsSync(f));
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
      return { endpoint: endpoint() };
    },
  };
}

/** chown -R, for index files copied back into a Dovecot home. */
function chownTree(p, uid, gid) {
  fs.chownSync(p, uid, gid);
  if (fs.statSync(p).isDirectory()) {
    for (const e of fs.readdirSync(p)) chownTree(path.join(p, e), uid, gid);
  }
}

module.exports = { dovecotServer };
