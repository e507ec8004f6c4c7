'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { runImport } = require('@mailgate/importer');
const { addLegacyUser } = require('@mailgate/legacy');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

// Issue 11 defect: `$Forwarded` imported from Maildir (info letter P) landed in `flags`, while
// remove:["$Forwarded"] edits `keywords`, so it never came off. One split now puts it in
// keywords on every path; removing it works on pg and on the maildir files themselves.
describe('$Forwarded from Maildir is a keyword and can be removed', () => {
  const ctx = useServiceSuite('fwd');
  let service;
  let maildir;
  beforeAll(async () => {
    ({ service } = ctx);
    maildir = path.join(ctx.tmp, 'Maildir');
    for (const d of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, d), { recursive: true });
    fs.writeFileSync(path.join(maildir, 'dovecot-keywords'), '0 Work\n');
    fs.writeFileSync(
      path.join(maildir, 'cur', '1000.M1.host:2,PSa'),
      msg({ subject: 'Passed on' }),
    );
    fs.writeFileSync(path.join(maildir, 'cur', '1001.M2.host:2,S'), msg({ subject: 'Plain' }));
    await runImport({
      store: ctx.db.store,
      kind: 'maildir',
      paths: [maildir],
      user: 'fwd',
      workers: 0,
      progress: false,
    });
    addLegacyUser(ctx.tmp, 'fwd', { maildir });
  });

  test.each(['pg', 'maildir'])(
    '%s: imported as a keyword, removed by remove:[$Forwarded]',
    async (kind) => {
      const be = await service.openBackend(kind, 'fwd');
      const rows = (await be.scan('INBOX', {})).rows;
      const passed = rows.find((r) => r.subject === 'Passed on');
      expect(passed.flags).toEqual(['\\Seen']);
      expect(passed.keywords).toEqual(['$Forwarded', 'Work']);
      const hits = await be.search('is:read', {});
      expect(hits.total).toBe(2);
      const r = await be.setFlags('INBOX', [passed.uid], [], ['$Forwarded']);
      expect(r.changed).toEqual([
        expect.objectContaining({ uid: passed.uid, flags: ['\\Seen'], keywords: ['Work'] }),
      ]);
      const again = (await be.scan('INBOX', {})).rows.find((x) => x.subject === 'Passed on');
      expect(again.keywords).toEqual(['Work']);
      // and back on: on Maildir it is the P letter again, not a dovecot-keywords letter
      await be.setFlags('INBOX', [passed.uid], ['$Forwarded'], []);
      const back = (await be.scan('INBOX', {})).rows.find((x) => x.subject === 'Passed on');
      expect(back.keywords).toEqual(['$Forwarded', 'Work']);
      if (kind === 'maildir') {
        expect(fs.readdirSync(path.join(maildir, 'cur'))).toContain('1000.M1.host:2,PSa');
        expect(fs.readFileSync(path.join(maildir, 'dovecot-keywords'), 'utf8')).toBe('0 Work\n');
      }
    },
  );
});
