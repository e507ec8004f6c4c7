'use strict';

/*
 * scripts/dovecot: a real Dovecot on loopback serving a small mbox and a small Maildir, checked
 * over IMAP with imapflow (SELECT, FETCH envelope/flags, SEARCH TEXT, delivery with dovecot-lda),
 * then stopped without leftovers. Needs dovecot-imapd (bash scripts/dovecot/install.sh) and root;
 * outside CI it skips without them, in CI it must run.
 */

const { skipNotice, dovecotMissing, inCI } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const { ImapFlow } = require('imapflow');
const dovecot = require('@mailgate/dovecot');

const { imapClient } = dovecot;
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const skipReason = dovecotMissing();

const SUBJECTS = ['Quarterly report', 'Lunch on Friday', 'Budget numbers'];
const bodies = [
  'The report is attached.\n',
  'Shall we meet at noon?\n',
  'The okapi line item is new this year.\n', // "okapi" is in this message only
];
const messages = SUBJECTS.map((subject, i) =>
  msg({
    subject,
    body: bodies[i],
    date: `Tue, 0${i + 1} Mar 2002 10:00:00 +0000`,
    headers: [`Message-ID: <m${i + 1}@example.org>`],
  }),
);

/* Expected system flags per message, \Recent left out (it depends on who looked first). */
const EXPECTED_FLAGS = {
  mbox: [[], ['\\Seen'], []], // message 2 has "Status: RO"
  maildir: [['\\Flagged', '\\Seen'], [], []], // message 1 is cur/...:2,FS
};

function buildMbox(dir) {
  const withStatus = messages.map((m, i) =>
    i === 1 ? Buffer.from(m.toString().replace('\n\n', '\nStatus: RO\n\n')) : m,
  );
  const file = path.join(dir, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf(withStatus));
  return file;
}

function buildMaildir(dir) {
  const md = path.join(dir, 'Maildir');
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(md, sub), { recursive: true });
  const names = ['1014976800.M1P1.test:2,FS', '1015063200.M2P1.test:2,', '1015149600.M3P1.test'];
  const subs = ['cur', 'cur', 'new'];
  names.forEach((name, i) => {
    const file = path.join(md, subs[i], name);
    fs.writeFileSync(file, messages[i]);
    const t = new Date(Date.UTC(2002, 2, i + 1, 10)); // keeps the order Dovecot sorts new mail in
    fs.utimesSync(file, t, t);
  });
  return md;
}

function listTree(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs
      .readdirSync(d, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${path.relative(dir, p)} ${fs.statSync(p).uid}`);
    }
  };
  walk(dir);
  return out;
}

function portClosed(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.on('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.on('error', () => resolve(true));
  });
}

async function connect(inst) {
  const client = await imapClient(inst);
  return client;
}

if (skipReason && !inCI) {
  skipNotice(__filename, skipReason);
  test.skip(`real Dovecot server (${skipReason})`, () => {});
} else {
  describe.each(['mbox', 'maildir'])('Dovecot serving %s', (format) => {
    let src;
    let mail;
    let inst;
    let client;
    let before;

    beforeAll(async () => {
      src = fs.mkdtempSync(path.join(os.tmpdir(), `dovecot-test-src-${format}-`));
      mail = format === 'mbox' ? buildMbox(src) : buildMaildir(src);
      before = format === 'maildir' ? listTree(mail) : fs.readFileSync(mail);
      // The Maildir instance hard-links the message files: the source must stay untouched.
      inst = await dovecot.start({ format, mail, link: format === 'maildir' });
      client = await connect(inst);
    });

    afterAll(async () => {
      if (client) await client.logout().catch(() => client.close());
      if (inst) await dovecot.stop(inst.dir).catch(() => {});
      if (src) fs.rmSync(src, { recursive: true, force: true });
    });

    test('start() returns a usable instance description', () => {
      expect(inst).toMatchObject({ host: '127.0.0.1', user: 'alice', format });
      expect(inst.port).toBeGreaterThan(0);
      expect(inst.password).toMatch(/^\S{8,}$/);
      expect(fs.readFileSync(inst.conf, 'utf8')).toContain(
        format === 'mbox' ? 'mbox:~/mail:INBOX=~/mail/inbox.mbox' : 'maildir:~/Maildir',
      );
      expect(fs.statSync(path.join(inst.dir, 'home', 'alice')).uid).toBe(dovecot.MAIL_UID);
      expect(dovecot.processes(inst.dir)[0]).toBe(inst.pid);
    });

    test('rejects a wrong password', async () => {
      const bad = new ImapFlow({
        host: inst.host,
        port: inst.port,
        secure: false,
        auth: { user: inst.user, pass: 'wrong' },
        logger: false,
      });
      bad.on('error', () => {});
      await expect(bad.connect()).rejects.toThrow();
      bad.close();
    });

    test('SELECT INBOX shows 3 messages; FETCH gives envelopes and flags', async () => {
      const box = await client.mailboxOpen('INBOX');
      expect(box.exists).toBe(3);
      const rows = [];
      for await (const m of client.fetch('1:*', { envelope: true, flags: true })) rows.push(m);
      expect(rows.map((m) => m.envelope.subject)).toEqual(SUBJECTS);
      expect(rows.map((m) => m.envelope.messageId)).toEqual([
        '<m1@example.org>',
        '<m2@example.org>',
        '<m3@example.org>',
      ]);
      const flags = rows.map((m) => [...m.flags].filter((f) => f !== '\\Recent').sort());
      expect(flags).toEqual(EXPECTED_FLAGS[format]);
    });

    test('SEARCH TEXT finds the one message with the word', async () => {
      expect(await client.search({ text: 'okapi' })).toEqual([3]);
      expect(await client.search({ text: 'noon' })).toEqual([2]);
      expect(await client.search({ text: 'no-such-word-anywhere' })).toEqual([]);
    });

    test('deliver() adds a new message upstream (dovecot-lda)', async () => {
      const raw = msg({
        subject: 'Delivered later',
        headers: ['Message-ID: <m4@example.org>'],
        body: 'Fresh mail.\n',
      });
      await dovecot.deliver(inst.dir, raw, { from: 'carol@example.org' });
      await client.noop();
      expect(client.mailbox.exists).toBe(4);
      const m = await client.fetchOne('4', { envelope: true });
      expect(m.envelope.subject).toBe('Delivered later');
      const status = await client.status('INBOX', { messages: true });
      expect(status.messages).toBe(4);
    });

    test('stop() closes the port and leaves no process of the instance', async () => {
      const pids = dovecot.processes(inst.dir);
      expect(pids.length).toBeGreaterThan(1); // master and its services
      await client.logout();
      client = null;
      await dovecot.stop(inst.dir);
      expect(await portClosed(inst.port)).toBe(true);
      const alive = pids.filter((pid) => {
        try {
          const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
          return !/^State:\s+Z/m.test(st);
        } catch {
          return false;
        }
      });
      expect(alive).toEqual([]);
      expect(fs.existsSync(inst.dir)).toBe(false); // a scratch dir start() made is removed
      inst = null;
      // The source mail is untouched (mbox copied; Maildir files hard-linked, not chowned).
      if (format === 'mbox') expect(fs.readFileSync(mail).equals(before)).toBe(true);
      else expect(listTree(mail)).toEqual(before);
    });
  });

  test('start() rejects a bad format or a missing mail path', async () => {
    await expect(dovecot.start({ format: 'mh' })).rejects.toThrow(/format must be/);
    await expect(
      dovecot.start({ format: 'mbox', mail: path.join(os.tmpdir(), 'no-such-mbox-here') }),
    ).rejects.toThrow(/mail not found/);
  });
}
