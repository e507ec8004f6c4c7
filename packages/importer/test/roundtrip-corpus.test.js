'use strict';

const { skipNotice } = require('@mailgate/test-support/skip');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { useCliSuite } = require('@mailgate/test-support/db');
const { corpusDir } = require('@mailgate/test-support/corpus');

// Round trips on the shared real-mail corpus (44,755 Enron messages, ~470 parser fixtures).
const dir = corpusDir();
const maybe = dir ? describe : describe.skip;
if (!dir) skipNotice(__filename, 'the shared corpus (../shared/corpus) is not beside the checkout');

const suite = useCliSuite('rt');
const { tmp } = suite;
const cli = (args) => suite.cli(args);

/** Every regular file under root, sorted (path order: user, folder, number as number). */
function listFiles(root) {
  const out = [];
  const walk = (d) => {
    const ents = fs.readdirSync(d, { withFileTypes: true });
    ents.sort((a, b) => {
      const na = /^\d+$/.test(a.name);
      const nb = /^\d+$/.test(b.name);
      if (na && nb) return Number(a.name) - Number(b.name);
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
    });
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(root);
  return out;
}

maybe('real corpus', () => {
  test('Enron: import mh → export mh is identical file for file; verify catches one changed byte', () => {
    const src = path.join(dir, 'enron', 'maildir');
    const r = cli(['import', 'mh', src, '--user', 'enron', '--json', '--quiet']);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ messages: 44755, imported: 44755, quarantined: 0 });
    const out = path.join(tmp, 'enron-out');
    const e = cli(['export', 'mh', '--user', 'enron', '--out', out, '--json']);
    expect(e.json.messages).toBe(44755);
    // diff exits non-zero on any difference, and prints it.
    execFileSync('diff', ['-r', '-q', src, out], { stdio: 'pipe' });
    expect(cli(['verify', 'mh', src, '--user', 'enron']).code).toBe(0);

    const victim = listFiles(out)[1234];
    const buf = fs.readFileSync(victim);
    buf[Math.floor(buf.length / 2)] ^= 0x20;
    fs.writeFileSync(victim, buf);
    const v = cli(['verify', 'mh', out, '--user', 'enron', '--json']);
    expect(v.code).toBe(1);
    expect(v.json).toMatchObject({ ok: false, missing: 1, present: 44754 });
    expect(v.json.problems[0].position).toBe(path.relative(out, victim));
  });

  test('Enron as one mbox round-trips byte-identically with --variant original', () => {
    const files = listFiles(path.join(dir, 'enron', 'maildir'));
    const mbox = path.join(tmp, 'enron.mbox');
    const fd = fs.openSync(mbox, 'w');
    // Enron files carry no From_ line: write one per message and escape as mboxrd does.
    for (const f of files) {
      const raw = fs.readFileSync(f).toString('latin1');
      const m = /^From:\s*(?:.*<)?([^\s<>]+@[^\s<>]+)/m.exec(raw);
      fs.writeSync(fd, `From ${m ? m[1] : 'MAILER-DAEMON'} Mon Jan  1 00:00:00 2001\n`);
      const esc = raw.replace(/^(>*From )/gm, '>$1');
      fs.writeSync(fd, Buffer.from(esc.endsWith('\n') ? esc + '\n' : esc + '\n\n', 'latin1'));
    }
    fs.closeSync(fd);
    const r = cli(['import', 'mbox', mbox, '--user', 'enronmbox', '--json', '--quiet']);
    expect(r.json).toMatchObject({
      messages: files.length,
      imported: files.length,
      quarantined: 0,
    });
    const out = path.join(tmp, 'enron-out.mbox');
    expect(
      cli(['export', 'mbox', '--user', 'enronmbox', '--mailbox', 'enron', '--out', out]).code,
    ).toBe(0);
    execFileSync('cmp', [mbox, out]);
    expect(cli(['verify', 'mbox', mbox, '--user', 'enronmbox', '--mailbox', 'enron']).code).toBe(0);
    fs.rmSync(out);
  });

  test('parser fixtures in one mbox: what imports round-trips exactly, the rest is quarantined', () => {
    const files = listFiles(path.join(dir, 'fixtures')).filter((f) => !f.includes('_licenses'));
    const entries = files.map((f) => {
      const raw = fs.readFileSync(f);
      const esc = Buffer.from(raw.toString('latin1').replace(/^(>*From )/gm, '>$1'), 'latin1');
      const tail = raw.length && raw[raw.length - 1] === 0x0a ? '\n' : '\n\n';
      return Buffer.concat([
        Buffer.from('From fixture@example.org Mon Jan  1 00:00:00 2001\n'),
        esc,
        Buffer.from(tail),
      ]);
    });
    const mbox = path.join(tmp, 'fixtures.mbox');
    fs.writeFileSync(mbox, Buffer.concat(entries));
    const r = cli(['import', 'mbox', mbox, '--user', 'fx', '--json', '--quiet']);
    expect(r.code).toBe(0);
    expect(r.json.messages).toBe(files.length);
    expect(r.json.imported + r.json.quarantined).toBe(files.length);
    const quarantinedAt = new Set(
      r.json.quarantine.map((q) => Number(q.position.replace('byte ', ''))),
    );
    let offset = 0;
    const expected = [];
    for (const e of entries) {
      if (!quarantinedAt.has(offset)) expected.push(e);
      offset += e.length;
    }
    const out = path.join(tmp, 'fixtures-out.mbox');
    cli(['export', 'mbox', '--user', 'fx', '--mailbox', 'fixtures', '--out', out]);
    expect(fs.readFileSync(out).equals(Buffer.concat(expected))).toBe(true);
  });
});
