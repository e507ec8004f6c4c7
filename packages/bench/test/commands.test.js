'use strict';

/*
 * The bench's commands (issue 31.5: scripts/bench-*.js and packages/mime/bench.js folded into
 * packages/bench): every command is registered and reachable from its root npm script, the
 * dispatcher answers usage errors with exit 2, and two commands run for real through the bin
 * (report re-renders a committed run; mime-parse parses a small tree).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { COMMANDS, main } = require('../lib/cli');
const { spread, median, messageSizes, typicalBySize } = require('../lib/imap-pair');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BIN = path.join(__dirname, '..', 'bin', 'mailgate-bench.js');
const bench = (args) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd: ROOT, timeout: 120000 });

/** Captures what `main` writes to stderr. */
async function withStderr(fn) {
  const write = process.stderr.write;
  let text = '';
  process.stderr.write = (s) => {
    text += s;
    return true;
  };
  try {
    return { code: await fn(), text };
  } finally {
    process.stderr.write = write;
  }
}

describe('bench commands', () => {
  test('every module under lib/commands is a registered command with usage and run', () => {
    const files = fs
      .readdirSync(path.join(__dirname, '..', 'lib', 'commands'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.slice(0, -3))
      .sort();
    expect([...COMMANDS].sort()).toEqual(files);
    for (const name of COMMANDS) {
      const c = require(`../lib/commands/${name}`);
      expect(typeof c.run).toBe('function');
      expect(typeof c.usage).toBe('string');
      expect(c.description.length).toBeGreaterThan(10);
    }
  });

  test('every root bench:* npm script runs a registered command of the bin', () => {
    const scripts = require(path.join(ROOT, 'package.json')).scripts;
    const bench = Object.entries(scripts).filter(([k]) => k.startsWith('bench:'));
    expect(bench.length).toBeGreaterThanOrEqual(COMMANDS.length - 1);
    for (const [, line] of bench) {
      const m = /^node packages\/bench\/bin\/mailgate-bench\.js ([\w-]+)/.exec(line);
      expect(m).not.toBeNull();
      expect(COMMANDS).toContain(m[1]);
    }
  });

  test('an unknown command and a command without its argument are usage errors (exit 2)', async () => {
    const unknown = await withStderr(() => main(['no-such-bench']));
    expect(unknown.code).toBe(2);
    expect(unknown.text).toMatch(/^USAGE: unknown bench command no-such-bench/);
    const report = await withStderr(() => main(['report']));
    expect(report.code).toBe(2);
    expect(report.text).toMatch(/^USAGE: report DIR/);
  });

  test('report re-renders a committed run from its results.json, keeping its command line', () => {
    const run = path.join(ROOT, 'bench', 'results', 'bench-small-2026-11-25-after-2');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-bench-report-'));
    try {
      for (const f of ['results.json', 'queries.json', 'results.md'])
        fs.copyFileSync(path.join(run, f), path.join(dir, f));
      const r = bench(['report', dir]);
      expect(r.stderr).toMatch(/wrote .*results\.md and \d+ charts/);
      expect(r.status).toBe(0);
      const md = fs.readFileSync(path.join(dir, 'results.md'), 'utf8');
      expect(md).toContain('mailgate bench --sizes small --backends pg --runs 5');
      expect(fs.readdirSync(path.join(dir, 'charts')).some((f) => f.endsWith('.svg'))).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('mime-parse parses a tree with both parsers', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-bench-mime-'));
    try {
      for (let i = 1; i <= 3; i++) {
        fs.mkdirSync(path.join(dir, 'u', 'inbox'), { recursive: true });
        fs.writeFileSync(
          path.join(dir, 'u', 'inbox', String(i)),
          `From: a@example.org\r\nSubject: m${i}\r\n\r\nbody ${i}\r\n`,
        );
      }
      const r = bench(['mime-parse', dir, '3']);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^3 messages/);
      expect(r.stdout).toMatch(/parseMessage: .* \(.*, 0 rejected\)/);
      expect(r.stdout).toMatch(/simpleParser: .*\(3 messages/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the IMAP pair's summary: median of an even count is the mean of the middle two", () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(spread([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1)).toEqual({
      median: 5.5,
      p90: 10,
      min: 1,
      max: 10,
    });
  });

  test('typical messages: sizes read from either order of the answer, picked from the middle half by size', async () => {
    const answer = [
      '* 1 FETCH (UID 11 RFC822.SIZE 500)',
      '* 2 FETCH (RFC822.SIZE 100 UID 12)',
      ...Array.from(
        { length: 6 },
        (_, i) => `* ${i + 3} FETCH (UID ${13 + i} RFC822.SIZE ${200 + i})`,
      ),
    ].join('\r\n');
    const raw = { command: async () => ({ text: () => answer }) };
    const list = await messageSizes(raw);
    expect(list.slice(0, 2)).toEqual([
      { uid: 11, size: 500 },
      { uid: 12, size: 100 },
    ]);
    // 8 messages by size: 100, 200..205, 500; the middle half is 201..204.
    expect(typicalBySize(list, 2).map((m) => m.size)).toEqual([201, 203]);
    expect(typicalBySize(list, 4).map((m) => m.size)).toEqual([201, 202, 203, 204]);
  });
});
