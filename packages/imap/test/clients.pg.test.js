'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('./helpers');

/*
 * Real IMAP clients against mailgate's server on the real store: curl (LIST, SEARCH, FETCH),
 * Python imaplib (SELECT/FETCH/STORE/EXPUNGE/APPEND), mbsync (isync) to a local Maildir with
 * byte comparison, offlineimap both ways. In CI they must be installed (.ci/run); elsewhere a
 * missing client skips its test with a printed reason.
 */

const PW = 'client pw 9';
let env;
let tmp;
const sources = [];

function tool(bin) {
  const r = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
  if (r.status === 0) return r.stdout.trim();
  if (process.env.CI) throw new Error(`${bin} is required in CI (.ci/run installs it)`);
  skipNotice(__filename, `${bin} is not installed`, `${bin} tests`);
  return null;
}

const CURL = tool('curl');
const PY = tool('python3');
const MBSYNC = tool('mbsync');
const OFFLINEIMAP = tool('offlineimap');
const NEOMUTT = tool('neomutt');
const TMUX = tool('tmux');

/**
 * Runs a client asynchronously: the server runs in this process, so a synchronous spawn
 * would block the very event loop that has to answer the client.
 */
function run(bin, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeout || 60000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out);
      resolve({
        status,
        stdout: opts.encoding === 'buffer' ? stdout : stdout.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });
}

beforeAll(async () => {
  env = await startPgServer({ users: { cli: PW } });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-imap-clients-'));
  const be = await env.service.openBackend('pg', 'cli');
  await be.createMailbox('INBOX');
  await be.createMailbox('Archive');
  for (let i = 1; i <= 12; i++) {
    const raw = msg({
      from: i % 3 ? 'Alice <alice@example.org>' : 'Carl <carl@example.com>',
      subject: `Message ${i}`,
      body: `Body number ${i}.\n${i === 7 ? 'needle in a haystack\n' : ''}`,
      eol: i % 2 ? '\r\n' : '\n',
    });
    const { uid } = await be.append('INBOX', raw, { flags: i <= 2 ? ['\\Seen'] : [] });
    sources.push({ mailbox: 'INBOX', uid, raw });
  }
  const latin = Buffer.from(
    'Subject: caf\xe9\r\nFrom: x@example.org\r\n\r\n8-bit body \xe9\xe8\r\n',
    'latin1',
  );
  const { uid } = await be.append('Archive', latin, {});
  sources.push({ mailbox: 'Archive', uid, raw: latin });
  // Stored with bare LF, as mbox and Maildir imports keep it: served as CRLF (issue 28 item 11).
  const lf = Buffer.from('Subject: lf stored\nFrom: y@example.org\n\nbody with LF only\n');
  const lfUid = (await be.append('Archive', lf, {})).uid;
  sources.push({ mailbox: 'Archive', uid: lfUid, raw: lf });
  await be.close();
});

afterAll(async () => {
  await env.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const url = (p = '') => `imap://127.0.0.1:${env.port}/${p}`;
// What IMAP serves for stored bytes: every bare LF made CRLF (RFC 3501 2.2), the stored bytes
// untouched.
const served = (raw) => Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

(CURL ? test : test.skip)('curl lists mailboxes, searches and fetches exact bytes', async () => {
  const base = ['-s', '--user', `cli:${PW}`];
  const list = await run(CURL, [...base, url()]);
  expect(list.status).toBe(0);
  expect(list.stdout).toMatch(/^\* LIST \([^)]*\) "\/" "?INBOX"?\r?$/m);
  expect(list.stdout).toMatch(/"?Archive"?\r?$/m);
  const search = await run(CURL, [...base, url('INBOX'), '-X', 'SEARCH FROM carl']);
  expect(search.stdout.trim()).toBe('* SEARCH 3 6 9 12');
  const text = await run(CURL, [...base, url('INBOX'), '-X', 'UID SEARCH BODY needle']);
  expect(text.stdout.trim()).toBe(`* SEARCH ${sources[6].uid}`);
  // CRLF-stored (0, 12) and LF-stored (1, 13) messages: each arrives as its CRLF form.
  for (const s of [sources[0], sources[1], sources[12], sources[13]]) {
    const r = await run(CURL, [...base, url(`${s.mailbox};UID=${s.uid}`)], { encoding: 'buffer' });
    expect(r.status).toBe(0);
    expect(Buffer.compare(r.stdout, served(s.raw))).toBe(0);
  }
  expect(served(sources[13].raw).length).toBeGreaterThan(sources[13].raw.length);
});

(PY ? test : test.skip)('python imaplib: SELECT, FETCH, STORE, EXPUNGE, APPEND', async () => {
  const script = `
import imaplib, sys
port = int(sys.argv[1])
m = imaplib.IMAP4('127.0.0.1', port)
m.login('cli', sys.argv[2])
typ, data = m.select('INBOX')
assert typ == 'OK' and data == [b'12'], (typ, data)
typ, data = m.fetch('1', '(RFC822)')
assert typ == 'OK' and data[0][1].startswith(b'From: Alice'), data
# Message 2 is stored with bare LF: served with CRLF, RFC822.SIZE the size of what is sent.
typ, data = m.fetch('2', '(RFC822.SIZE BODY.PEEK[])')
body = data[0][1]
assert b'\\r\\n' in body and b'\\n' not in body.replace(b'\\r\\n', b''), body
assert ('RFC822.SIZE %d ' % len(body)).encode() in data[0][0], data
typ, data = m.fetch('2', '(BODY.PEEK[TEXT]<0.6>)')
assert data[0][1] == b'Body n', data
typ, data = m.uid('FETCH', '1:*', '(FLAGS)')
assert len([d for d in data if d]) == 12, data
typ, data = m.store('3', '+FLAGS', '(\\\\Deleted)')
assert typ == 'OK' and b'\\\\Deleted' in data[0], data
typ, data = m.expunge()
assert typ == 'OK' and data == [b'3'], data
typ, data = m.select('INBOX')
assert data == [b'11'], data
raw = b'Subject: from python\\r\\n\\r\\nappended by imaplib\\r\\n'
typ, data = m.append('Archive', '(\\\\Flagged)', None, raw)
assert typ == 'OK' and b'APPENDUID' in data[0], data
m.select('Archive', readonly=True)
typ, data = m.uid('SEARCH', None, 'SUBJECT', '"from python"')
uid = data[0].split()[-1]
typ, data = m.uid('FETCH', uid, '(BODY.PEEK[] FLAGS)')
assert data[0][1] == raw, data
assert b'\\\\Flagged' in data[0][0] + data[1], data
m.logout()
print('ok')
`;
  const r = await run(PY, ['-c', script, String(env.port), PW]);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('ok');
});

function maildirFiles(dir) {
  const out = [];
  for (const sub of ['cur', 'new']) {
    const d = path.join(dir, sub);
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d)) out.push(path.join(d, f));
  }
  return out;
}

(MBSYNC ? test : test.skip)(
  'mbsync syncs every mailbox to a Maildir, bytes identical (CRLF → LF)',
  async () => {
    const be = await env.service.openBackend('pg', 'cli');
    const now = [];
    for (const box of ['INBOX', 'Archive']) {
      for await (const row of be.scanStream(box))
        now.push({ mailbox: box, raw: await be.getRaw(box, row.uid) });
    }
    await be.close();
    const local = path.join(tmp, 'mbsync');
    fs.mkdirSync(local);
    const cfg = path.join(tmp, 'mbsyncrc');
    fs.writeFileSync(
      cfg,
      [
        'IMAPAccount mg',
        'Host 127.0.0.1',
        `Port ${env.port}`,
        'User cli',
        `Pass "${PW}"`,
        'SSLType None',
        'AuthMechs LOGIN',
        '',
        'IMAPStore mg-remote',
        'Account mg',
        '',
        'MaildirStore mg-local',
        `Path ${local}/`,
        `Inbox ${local}/INBOX`,
        'SubFolders Verbatim',
        '',
        'Channel mg',
        'Far :mg-remote:',
        'Near :mg-local:',
        'Patterns *',
        'Create Near',
        'Sync Pull',
        `SyncState ${tmp}/mbsync-state/`,
        '',
      ].join('\n'),
    );
    fs.mkdirSync(path.join(tmp, 'mbsync-state'));
    const r = await run(MBSYNC, ['-c', cfg, '-a']);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    for (const box of ['INBOX', 'Archive']) {
      const got = maildirFiles(path.join(local, box))
        // mbsync marks each message it propagates with a temporary `X-TUID:` header line
        // (isync's way to find a stored message again); that line is the client's, not ours.
        .map((f) =>
          fs
            .readFileSync(f)
            .toString('latin1')
            .replace(/^X-TUID: [^\n]*\n/m, ''),
        )
        .sort();
      // mbsync stores Maildir messages with LF line ends (its documented CRLF → LF conversion).
      const want = now
        .filter((m) => m.mailbox === box)
        .map((m) => m.raw.toString('latin1').replace(/\r\n/g, '\n'))
        .sort();
      expect(got).toEqual(want);
    }
  },
);

(OFFLINEIMAP ? test : test.skip)(
  'offlineimap syncs both ways: a flag set on either side reaches the other',
  async () => {
    const local = path.join(tmp, 'offline');
    const meta = path.join(tmp, 'offline-meta');
    const cfg = path.join(tmp, 'offlineimaprc');
    fs.writeFileSync(
      cfg,
      [
        '[general]',
        'accounts = mg',
        `metadata = ${meta}`,
        'ui = quiet',
        '',
        '[Account mg]',
        'localrepository = local',
        'remoterepository = remote',
        '',
        '[Repository local]',
        'type = Maildir',
        `localfolders = ${local}`,
        '',
        '[Repository remote]',
        'type = IMAP',
        'remotehost = 127.0.0.1',
        `remoteport = ${env.port}`,
        'remoteuser = cli',
        `remotepass = ${PW}`,
        'ssl = no',
        'starttls = no',
        'folderfilter = lambda f: f == "Archive"',
        '',
      ].join('\n'),
    );
    const sync = async () => {
      const r = await run(OFFLINEIMAP, ['-c', cfg, '-o', '-u', 'quiet']);
      expect(r.stderr).not.toMatch(/ERROR/);
      expect(r.status).toBe(0);
    };
    await sync();
    const dir = path.join(local, 'Archive');
    const files = maildirFiles(dir);
    expect(files.length).toBeGreaterThan(0);
    // Local → server: flag one message \Flagged in the Maildir (info suffix F).
    // The LF-stored message arrived too, whole (offlineimap checks what it saved).
    expect(files.some((f) => fs.readFileSync(f, 'latin1').includes('body with LF only'))).toBe(
      true,
    );
    const target = files.find((f) => fs.readFileSync(f, 'latin1').includes('8-bit body'));
    const base = path.basename(target).replace(/:2,.*$/, '');
    const flagged = path.join(dir, 'cur', `${base}:2,F`);
    fs.renameSync(target, flagged);
    await sync();
    const be = await env.service.openBackend('pg', 'cli');
    const archived = sources.find((s) => s.mailbox === 'Archive');
    const row = (await be.scan('Archive', {})).rows.find((x) => x.uid === archived.uid);
    expect(row.flags).toContain('\\Flagged');
    // Server → local: mark it \Seen on the server; the next sync renames the file with S.
    await be.setFlags('Archive', [archived.uid], ['\\Seen'], []);
    await be.close();
    await sync();
    const after = maildirFiles(dir).find((f) =>
      fs.readFileSync(f, 'latin1').includes('8-bit body'),
    );
    expect(path.basename(after)).toMatch(/:2,F?S$/);
  },
);

(NEOMUTT && TMUX ? test : test.skip)(
  'neomutt in tmux lists the mailbox and shows an LF-stored message whole',
  async () => {
    const home = path.join(tmp, 'neomutt');
    fs.mkdirSync(home);
    const rc = path.join(home, 'muttrc');
    fs.writeFileSync(
      rc,
      [
        `set folder = "imap://cli@127.0.0.1:${env.port}/"`,
        `set imap_pass = "${PW}"`,
        'set spoolfile = "+Archive"',
        'set ssl_starttls = no',
        'set ssl_force_tls = no',
        'set header_cache = ""',
        'set message_cachedir = ""',
        'set imap_check_subscribed = no',
        'set timeout = 1',
        'set beep = no',
        '',
      ].join('\n'),
    );
    const session = `mg-neomutt-${process.pid}`;
    const tmuxRun = (args) => run(TMUX, ['-L', session, ...args]);
    const screen = async () => (await tmuxRun(['capture-pane', '-p', '-t', session])).stdout;
    const waitFor = async (re) => {
      for (let i = 0; i < 100; i++) {
        const text = await screen();
        if (re.test(text)) return text;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`neomutt never showed ${re}:\n${await screen()}`);
    };
    // A private tmux server (-L) with HOME in the scratch dir: nothing of the machine's.
    await run('env', [
      `HOME=${home}`,
      TMUX,
      '-L',
      session,
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '160',
      '-y',
      '40',
      `${NEOMUTT} -n -F ${rc}`,
    ]);
    try {
      await waitFor(/lf stored/);
      await tmuxRun(['send-keys', '-t', session, '/']);
      await tmuxRun(['send-keys', '-t', session, 'lf stored', 'Enter']);
      await tmuxRun(['send-keys', '-t', session, 'Enter']);
      const shown = await waitFor(/body with LF only/);
      expect(shown).toMatch(/^Subject: lf stored\s*$/m);
      // No carriage return shown as ^M, no fetch or parse error on the status line.
      expect(shown).not.toMatch(/\^M|rror/);
    } finally {
      await tmuxRun(['kill-server']);
    }
  },
);
