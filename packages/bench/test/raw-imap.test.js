'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { RawImapClient, Framer, literalAt } = require('../lib/raw-imap');

/*
 * The raw timing client frames answers without parsing them. These tests check the framing on
 * hostile byte splits (a literal that contains a fake tagged line, a chunk boundary in every
 * place), and that parsing after the clock never enters the timed figure.
 */

/** A scripted IMAP server: answers each tagged command with `respond(tag, command)`'s bytes. */
function scriptedServer(respond, { chunk = 0, delayMs = 0 } = {}) {
  const server = net.createServer((sock) => {
    sock.write('* OK scripted ready\r\n');
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      let nl;
      while ((nl = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const sp = line.indexOf(' ');
        const tag = line.slice(0, sp);
        const out = Buffer.from(respond(tag, line.slice(sp + 1)), 'latin1');
        const send = async () => {
          if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
          if (!chunk) return sock.write(out);
          for (let i = 0; i < out.length; i += chunk) sock.write(out.subarray(i, i + chunk));
        };
        send();
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port })),
  );
}

/** A FETCH answer of n messages, each with a header literal holding a line that looks tagged. */
function fetchAnswer(tag, n) {
  let out = '';
  for (let i = 1; i <= n; i++) {
    const lit = `From: a${i}@example.org\r\n${tag} OK not the end\r\n* 99 EXISTS\r\n\r\n`;
    out += `* ${i} FETCH (UID ${i * 10} FLAGS (\\Seen) BODY[HEADER.FIELDS (FROM)] {${Buffer.byteLength(lit, 'latin1')}}\r\n${lit})\r\n`;
  }
  return out + `${tag} OK FETCH done\r\n`;
}

describe('Framer', () => {
  test('skips literals by length, so a tagged-looking line inside one does not end the answer', () => {
    const text = fetchAnswer('R7', 3);
    for (let split = 1; split < text.length; split++) {
      const f = new Framer('R7');
      const b = Buffer.from(text, 'latin1');
      const first = f.push(b.subarray(0, split));
      const second = first || f.push(b.subarray(split));
      expect(first).toBe(split >= text.length); // never done before the real tagged line
      expect(second).toBe(true);
      expect(f.untagged).toBe(3);
      expect(f.status).toBe('OK');
    }
  });

  test('reads NO and BAD completions', () => {
    const f = new Framer('A1');
    expect(f.push(Buffer.from('* BYE x\r\nA1 NO [ALERT] nope\r\n'))).toBe(true);
    expect(f.status).toBe('NO');
    expect(f.statusLine).toBe('NO [ALERT] nope');
  });

  test('literalAt finds {n} and {n+} only at the end of a line', () => {
    const at = (s) => literalAt(Buffer.from(s), s.length - 1);
    expect(at('x {12}\r\n')).toBe(12);
    expect(at('x {12+}\r\n')).toBe(12);
    expect(at('x {}\r\n')).toBe(-1);
    expect(at('x 12}\r\n')).toBe(-1);
    expect(at('x {1a}\r\n')).toBe(-1);
  });
});

describe('RawImapClient against a scripted server', () => {
  let srv;
  afterEach(() => srv && srv.server.close());

  test('counts untagged responses and bytes, and parses uids only on request', async () => {
    srv = await scriptedServer(
      (tag, cmd) =>
        cmd.startsWith('LOGIN')
          ? `${tag} OK logged in\r\n`
          : cmd.startsWith('UID SEARCH')
            ? `* SEARCH 3 5 8\r\n${tag} OK done\r\n`
            : fetchAnswer(tag, 500),
      { chunk: 7 },
    );
    const c = new RawImapClient({ port: srv.port });
    expect(await c.connect()).toMatch(/^\* OK scripted ready/);
    await c.login('u', 'p"w');
    const a = await c.command('UID FETCH 1:* (UID FLAGS BODY.PEEK[HEADER.FIELDS (FROM)])');
    expect(a.untagged).toBe(500);
    expect(a.bytes).toBe(Buffer.byteLength(fetchAnswer('R2', 500), 'latin1'));
    expect(a.uids()).toEqual(Array.from({ length: 500 }, (_, i) => (i + 1) * 10));
    const s = await c.command('UID SEARCH FROM "x"');
    expect(s.uids()).toEqual([3, 5, 8]);
    c.socket.destroy();
  });

  test('a failed command rejects with the server line', async () => {
    srv = await scriptedServer((tag) => `${tag} BAD unknown command\r\n`);
    const c = new RawImapClient({ port: srv.port });
    await c.connect();
    await expect(c.command('XYZZY')).rejects.toMatchObject({ code: 'IMAP_COMMAND_FAILED' });
    c.socket.destroy();
  });

  test('the timed figure excludes parsing: a slow parser after the answer does not change it', async () => {
    // The server answers after 150 ms; a parser that takes 400 ms runs after the clock stops.
    srv = await scriptedServer((tag) => fetchAnswer(tag, 200), { delayMs: 150 });
    const c = new RawImapClient({ port: srv.port });
    try {
      await c.connect();
      const plain = await c.command('FETCH 1:* (FLAGS)');
      // One monotonic clock for the test's own figures, the one the client uses: Date.now()'s
      // whole milliseconds once made a 400 ms spin 399.x ms and failed CI by 0.08 ms.
      const now = () => Number(process.hrtime.bigint()) / 1e6;
      let spun = 0;
      const slowParse = (answer) => {
        const from = now();
        while (now() - from < 400); // a deliberately slow, synchronous parse
        spun = now() - from;
        return answer.uids();
      };
      const t0 = now();
      const a = await c.command('FETCH 1:* (FLAGS)');
      const uids = slowParse(a);
      const wall = now() - t0;
      expect(uids).toHaveLength(200);
      expect(spun).toBeGreaterThanOrEqual(400);
      // The timed figure holds the server's delay and never the parse: the parse spins >= 400 ms
      // after the answer, so a figure that included it would be at least 400 ms plus the delay.
      // Half the spin as the margin keeps the bound true on any machine, however loaded
      // (issue 30.5: no bar on how fast the machine is), while a figure with the parse in it
      // still fails it.
      expect(plain.ms).toBeGreaterThanOrEqual(140);
      expect(a.ms).toBeGreaterThanOrEqual(140);
      expect(a.ms).toBeLessThanOrEqual(wall - spun / 2);
    } finally {
      // Destroyed even when an expectation fails: a socket left open kept the runInBand Jest
      // process alive after the run until CI's time limit (stop 37).
      c.socket && c.socket.destroy();
    }
  });
});

const dovecot = require('@mailgate/dovecot');
const haveDovecot = dovecot.installed();
if (!haveDovecot) {
  if (process.env.CI === 'true') throw new Error('CI: Dovecot is required for raw-imap.test.js');
  skipNotice(__filename, 'dovecot-imapd is not installed', 'real Dovecot');
}

(haveDovecot ? describe : describe.skip)('RawImapClient against the real Dovecot', () => {
  let inst;
  let dir;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'raw-imap-'));
    const mbox = path.join(dir, 'inbox.mbox');
    let text = '';
    for (let i = 1; i <= 30; i++) {
      text +=
        `From a${i}@example.org Mon Nov 23 10:00:00 2026\n` +
        `From: a${i}@example.org\nTo: b@example.org\nSubject: m${i}${i % 10 === 0 ? ' needle' : ''}\n` +
        `Date: Mon, 23 Nov 2026 10:00:00 +0000\nMessage-ID: <m${i}@example.org>\n\nbody ${i}\n\n`;
    }
    fs.writeFileSync(mbox, text);
    inst = await dovecot.start({ format: 'mbox', mail: mbox });
  });
  afterAll(async () => {
    if (inst) await dovecot.stop(inst.dir, { keep: false });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('both header variants, search and expunge, framed and counted', async () => {
    const c = new RawImapClient({ host: inst.host, port: inst.port });
    await c.connect();
    await c.login(inst.user, inst.password);
    const sel = await c.command('SELECT INBOX');
    expect(sel.exists()).toBe(30);
    const env = await c.command('UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)');
    expect(env.untagged).toBe(30);
    expect(env.uids()).toHaveLength(30);
    const list = await c.command(
      'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)',
    );
    expect(list.untagged).toBe(30);
    expect(list.text()).toContain('Subject: m30 needle');
    const hits = await c.command('UID SEARCH SUBJECT "needle"');
    expect(hits.uids()).toHaveLength(3);
    await c.command(`UID STORE ${hits.uids().join(',')} +FLAGS.SILENT (\\Deleted)`);
    const gone = await c.command('EXPUNGE');
    // Dovecot may add other untagged data (e.g. a new RECENT count) to the expunge answer.
    expect(gone.text().match(/^\* \d+ EXPUNGE/gm)).toHaveLength(3);
    expect(gone.untagged).toBeGreaterThanOrEqual(3);
    await c.logout();
  });
});
