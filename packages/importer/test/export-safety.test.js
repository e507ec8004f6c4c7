'use strict';

/*
 * Exports and the files a user already has (issue 30.1, 30.2, 29.6): an existing file or a
 * non-empty folder is refused with OUTPUT_EXISTS unless --force; the source an import read is
 * never written over or into, even with --force; a failing export leaves nothing under the
 * final name; a mailbox name planted in the store past every door cannot lead an export
 * outside --out; quarantined entries are reported and, with --include-quarantined, written.
 */

const fs = require('node:fs');
const path = require('node:path');
const { exportMbox, exportMh, exportMaildir } = require('@mailgate/importer');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useServiceSuite('export-safety');
const cli = (args) => suite.cli(args);
const tmpLeft = (dir) => fs.readdirSync(dir).filter((f) => f.includes('.tmp-'));

/** Every file under dir (relative path → bytes), for "unchanged" checks. */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = fs.readFileSync(p, 'latin1');
    }
  };
  walk(dir);
  return out;
}

let source;
let mhSource;
const garbage = Buffer.from('this is just text without any header\nsecond line\n');
beforeAll(() => {
  source = path.join(suite.tmp, 'inbox.mbox');
  const entries = [msg({ subject: 'one' }), garbage, msg({ subject: 'three' })];
  fs.writeFileSync(source, mboxOf(entries));
  expect(cli(['import', 'mbox', source, '--user', 'alice', '--quiet']).code).toBe(0);
  mhSource = path.join(suite.tmp, 'mh-src');
  fs.mkdirSync(path.join(mhSource, 'work'), { recursive: true });
  fs.writeFileSync(path.join(mhSource, 'work', '1'), msg({ subject: 'mh one' }));
  fs.writeFileSync(path.join(mhSource, 'work', '2'), msg({ subject: 'mh two' }));
  expect(cli(['import', 'mh', mhSource, '--user', 'bob', '--quiet']).code).toBe(0);
});

// `export <kind>` of a user's mail (mbox: INBOX) to out: with --json, or as a person runs it.
const exportArgs = (kind, user, out) => [
  'export',
  kind,
  '--user',
  user,
  ...(kind === 'mbox' ? ['--mailbox', 'INBOX'] : []),
  '--out',
  out,
];
const exportCli = (kind, user, out, ...more) =>
  cli([...exportArgs(kind, user, out), '--json', ...more]);
const exportHuman = (kind, user, out, ...more) => cli([...exportArgs(kind, user, out), ...more]);

describe('OUTPUT_EXISTS without --force', () => {
  test('mbox onto an existing file: refused, the file unchanged; --force replaces it', () => {
    const out = path.join(suite.tmp, 'taken.mbox');
    fs.writeFileSync(out, 'precious\n');
    const r = exportCli('mbox', 'alice', out);
    expect({ code: r.code, error: r.json.error.code }).toEqual({ code: 1, error: 'OUTPUT_EXISTS' });
    expect(r.json.error.message).toContain(out);
    expect(r.stderr).toMatch(/^OUTPUT_EXISTS: .*--force/m);
    expect(fs.readFileSync(out, 'utf8')).toBe('precious\n');
    const f = exportCli('mbox', 'alice', out, '--force');
    expect(f.code).toBe(0);
    expect(fs.readFileSync(out, 'latin1')).toContain('Subject: three');
    expect(tmpLeft(suite.tmp)).toEqual([]);
  });

  test('mh and maildir into a non-empty folder: refused, nothing there changes', () => {
    for (const kind of ['mh', 'maildir']) {
      const out = path.join(suite.tmp, `someone-else-${kind}`);
      fs.mkdirSync(path.join(out, 'work'), { recursive: true });
      fs.writeFileSync(path.join(out, '1'), 'another user 1\n');
      fs.writeFileSync(path.join(out, 'work', '1'), 'another user 2\n');
      const before = snapshot(out);
      const r = exportCli(kind, 'bob', out);
      expect({ code: r.code, error: r.json.error.code }).toEqual({
        code: 1,
        error: 'OUTPUT_EXISTS',
      });
      expect(snapshot(out)).toEqual(before);
    }
  });

  test('an empty folder is fine; --force writes into a non-empty one', () => {
    const out = path.join(suite.tmp, 'empty-mh');
    fs.mkdirSync(out);
    expect(exportCli('mh', 'bob', out).code).toBe(0);
    expect(fs.readFileSync(path.join(out, 'work', '2'), 'latin1')).toContain('mh two');
    fs.writeFileSync(path.join(out, 'mine'), 'kept\n');
    expect(exportCli('mh', 'bob', out).json.error.code).toBe('OUTPUT_EXISTS');
    expect(exportCli('mh', 'bob', out, '--force').code).toBe(0);
    expect(fs.readFileSync(path.join(out, 'mine'), 'utf8')).toBe('kept\n');
    expect(tmpLeft(suite.tmp)).toEqual([]);
  });
});

describe('the source an import read: never, even with --force', () => {
  test('mbox over its own source file', () => {
    const before = fs.readFileSync(source);
    const r = exportCli('mbox', 'alice', source, '--force');
    expect({ code: r.code, error: r.json.error.code }).toEqual({
      code: 1,
      error: 'OUTPUT_IS_SOURCE',
    });
    expect(fs.readFileSync(source)).toEqual(before);
  });

  test('mh over, into and around its source tree', () => {
    const before = snapshot(mhSource);
    for (const out of [mhSource, path.join(mhSource, 'work'), suite.tmp]) {
      const r = exportCli('mh', 'bob', out, '--force');
      expect({ out, error: r.json.error.code }).toEqual({ out, error: 'OUTPUT_IS_SOURCE' });
    }
    expect(snapshot(mhSource)).toEqual(before);
  });
});

describe('a failing export leaves nothing under the final name', () => {
  /** The store, with a stream that fails after its first row (a disk error, a kill). */
  const failingStore = () => {
    const store = Object.create(suite.service.store);
    store.streamSources = function (userId, mailboxId) {
      const inner = suite.service.store.streamSources(userId, mailboxId);
      return (async function* () {
        const rows = [];
        for await (const row of inner) rows.push(row); // read to the end: no stream cut short
        yield rows[0];
        throw new Error('stopped half way');
      })();
    };
    return store;
  };

  test.each([
    ['mbox', exportMbox],
    ['mh', exportMh],
    ['maildir', exportMaildir],
  ])('%s', async (kind, fn) => {
    const out = path.join(suite.tmp, `half-${kind}`);
    await expect(
      fn({ store: failingStore(), user: 'alice', mailbox: 'INBOX', out }),
    ).rejects.toThrow('stopped half way');
    expect(fs.existsSync(out)).toBe(false);
    expect(tmpLeft(suite.tmp)).toEqual([]);
  });
});

describe('never outside --out (a name planted in the store past every door)', () => {
  const plant = async (user, name) => {
    const knex = suite.db.knex;
    const u = await knex('users').where({ name: user }).first();
    await knex('mailboxes').where({ user_id: u.id, name: 'work' }).update({ name });
  };

  test.each([
    ['mh', exportMh, '../../escaped-mh'],
    ['maildir', exportMaildir, '.'],
  ])('%s refuses the export and writes nothing', async (kind, fn, name) => {
    const user = `planted-${kind}`;
    expect(cli(['import', 'mh', mhSource, '--user', user, '--quiet']).code).toBe(0);
    await plant(user, name);
    const parent = path.join(suite.tmp, `parent-${kind}`);
    fs.mkdirSync(parent);
    const out = path.join(parent, 'a', 'out');
    await expect(fn({ store: suite.service.store, user, out })).rejects.toMatchObject({
      code: 'OUTPUT_OUTSIDE',
    });
    // nothing at all: not outside, not under --out, no temporary folder
    expect(snapshot(parent)).toEqual({});
    expect(fs.existsSync(path.join(suite.tmp, 'escaped-mh'))).toBe(false);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('quarantined entries (30.2)', () => {
  test('mbox export names what it did not write; --include-quarantined writes it', () => {
    const out = path.join(suite.tmp, 'q.mbox');
    const r = exportCli('mbox', 'alice', out);
    expect(r.code).toBe(0);
    expect(r.json.messages).toBe(2);
    expect(r.json.quarantined).toMatchObject({ count: 1, included: false });
    const id = r.json.quarantined.ids[0];
    expect(Number.isInteger(id)).toBe(true);
    const human = exportHuman('mbox', 'alice', out, '--force');
    expect(human.stderr).toContain('not written: 1 quarantined entries');
    expect(human.stderr).toContain(`ids ${id}`);
    expect(human.stderr).toContain('mailgate quarantine --user alice --raw ID');
    expect(fs.readFileSync(out, 'latin1')).not.toContain('without any header');
    const all = exportCli('mbox', 'alice', out, '--force', '--include-quarantined');
    expect(all.json.quarantined).toMatchObject({ count: 1, included: true });
    expect(fs.readFileSync(out).includes(garbage)).toBe(true);
    const quiet = exportHuman('mbox', 'alice', out, '--force', '--quiet');
    expect({ code: quiet.code, stderr: quiet.stderr, stdout: quiet.stdout }).toEqual({
      code: 0,
      stderr: '',
      stdout: '',
    });
  });

  test('maildir export with --include-quarantined puts the entry back under its name', () => {
    const src = path.join(suite.tmp, 'md-q');
    for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(src, sub), { recursive: true });
    fs.writeFileSync(path.join(src, 'cur', '1000.M1.host:2,S'), msg({ subject: 'kept' }));
    fs.writeFileSync(path.join(src, 'cur', '1001.M2.host:2,'), garbage);
    expect(cli(['import', 'maildir', src, '--user', 'dora', '--quiet']).code).toBe(0);
    const out = path.join(suite.tmp, 'md-q-out');
    const without = exportCli('maildir', 'dora', out);
    expect(without.json.quarantined).toMatchObject({ count: 1, included: false });
    expect(fs.readdirSync(path.join(out, 'cur'))).toEqual(['1000.M1.host:2,S']);
    const r = exportCli('maildir', 'dora', out, '--force', '--include-quarantined');
    expect(r.json.quarantined).toMatchObject({ count: 1, included: true });
    expect(fs.readFileSync(path.join(out, 'cur', '1001.M2.host:2,'))).toEqual(garbage);
  });

  test('mh export with --include-quarantined puts the entry back in its folder', () => {
    const src = path.join(suite.tmp, 'mh-q');
    fs.mkdirSync(path.join(src, 'box'), { recursive: true });
    fs.writeFileSync(path.join(src, 'box', '1'), msg({ subject: 'fine' }));
    fs.writeFileSync(path.join(src, 'box', '2'), garbage);
    expect(cli(['import', 'mh', src, '--user', 'carol', '--quiet']).code).toBe(0);
    const out = path.join(suite.tmp, 'mh-q-out');
    const r = exportCli('mh', 'carol', out, '--include-quarantined');
    expect(r.json.quarantined).toMatchObject({ count: 1, included: true });
    expect(fs.readFileSync(path.join(out, 'box', '2'))).toEqual(garbage);
    expect(fs.readFileSync(path.join(out, 'box', '1'))).toEqual(
      fs.readFileSync(path.join(src, 'box', '1')),
    );
  });
});
