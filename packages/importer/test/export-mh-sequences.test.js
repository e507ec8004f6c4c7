'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { runImport, exportMh } = require('@mailgate/importer');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

/*
 * export mh writes each folder's flags back as `.mh_sequences` (unseen, flagged: what the MH
 * reader takes), so a tree imported with its sequences comes back with its flags: a new
 * user's `diff -r` found the file missing and \Seen and \Flagged lost.
 */
describe('export mh keeps flags in .mh_sequences', () => {
  const ctx = useServiceSuite('mh-seq');

  test('imported sequences come back; a folder without flags gets no file', async () => {
    const root = path.join(ctx.tmp, 'mh');
    for (const dir of ['inbox', 'plain']) {
      fs.mkdirSync(path.join(root, dir), { recursive: true });
      for (let i = 1; i <= 6; i++) {
        fs.writeFileSync(path.join(root, dir, String(i)), msg({ subject: `${dir} ${i}` }));
      }
    }
    fs.writeFileSync(path.join(root, 'inbox', '.mh_sequences'), 'unseen: 1-2 5\nflagged: 3\n');
    const store = ctx.service.store;
    await runImport({ store, kind: 'mh', paths: [root], user: 'seq', workers: 0, progress: false });
    const be = await ctx.service.openBackend('pg', 'seq');
    await be.setFlags('INBOX', [6], ['\\Flagged'], []); // a change made after the import
    await be.close();
    const out = path.join(ctx.tmp, 'out');
    await exportMh({ store, user: 'seq', out });
    expect(fs.readFileSync(path.join(out, 'inbox', '.mh_sequences'), 'latin1')).toBe(
      'unseen: 1-2 5\nflagged: 3 6\n',
    );
    expect(fs.existsSync(path.join(out, 'plain', '.mh_sequences'))).toBe(false);
    // and it reads back as the same flags
    await runImport({ store, kind: 'mh', paths: [out], user: 'seq2', workers: 0, progress: false });
    const b2 = await ctx.service.openBackend('pg', 'seq2');
    const rows = (await b2.scan('INBOX', {})).rows.map((r) => [r.subject, r.flags.sort()]);
    await b2.close();
    expect(rows).toEqual([
      ['inbox 1', []],
      ['inbox 2', []],
      ['inbox 3', ['\\Flagged', '\\Seen']],
      ['inbox 4', ['\\Seen']],
      ['inbox 5', []],
      ['inbox 6', ['\\Flagged', '\\Seen']],
    ]);
  });

  test('numbers taken by mail of another source get the next free number, and read back', async () => {
    const store = ctx.service.store;
    const mbox = path.join(ctx.tmp, 'two.mbox');
    fs.writeFileSync(mbox, mboxOf([msg({ subject: 'mbox 1' }), msg({ subject: 'mbox 2' })]));
    await runImport({
      store,
      kind: 'mbox',
      paths: [mbox],
      user: 'mixed',
      mailbox: 'INBOX',
      workers: 0,
      progress: false,
    });
    const root = path.join(ctx.tmp, 'mh-root');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, '2'), msg({ subject: 'mh 2' })); // root files are INBOX
    await runImport({
      store,
      kind: 'mh',
      paths: [root],
      user: 'mixed',
      workers: 0,
      progress: false,
    });
    const out = path.join(ctx.tmp, 'mixed-out');
    await exportMh({ store, user: 'mixed', out });
    const names = fs.readdirSync(out).sort();
    expect(names).toEqual(['1', '2', '3']);
    await runImport({
      store,
      kind: 'mh',
      paths: [out],
      user: 'mixed2',
      workers: 0,
      progress: false,
    });
    const b = await ctx.service.openBackend('pg', 'mixed2');
    const subjects = (await b.scan('INBOX', {})).rows.map((r) => r.subject).sort();
    await b.close();
    expect(subjects).toEqual(['mbox 1', 'mbox 2', 'mh 2']);
  });
});
