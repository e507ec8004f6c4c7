'use strict';

/*
 * Issue 28's done-when for SEARCH: the same mbox imported into a real Dovecot 2.3
 * (@mailgate/dovecot) and into mailgate, the same flags set on both over IMAP, then the same
 * SEARCH commands on both servers' wire must answer the same message numbers: BODY, TEXT,
 * FROM, TO, CC, SUBJECT, HEADER, SENTBEFORE/SENTON/SENTSINCE, BEFORE/ON/SINCE, flags, and
 * AND/OR/NOT mixes. The mbox is real mailing-list mail (@mailgate/test-support/list-mail) plus the
 * hand-made cases of issue 28 (groups, comments in addresses, two Cc lines, dates whose zone
 * moves their UTC day, a missing Date, a base64 text part, a quoted-printable patch
 * attachment, message/rfc822 parts).
 *
 * Differences kept on purpose, and so not asked here (packages/imap/README.md says why):
 * HTML parts are searched as their text (Dovecot searches the markup: `BODY nbsp`), and text
 * is compared lower-cased without Unicode compatibility folding (Dovecot maps U+00A0 to a
 * space). LARGER/SMALLER compare RFC822.SIZE (the CRLF size) on both.
 * Needs Dovecot and root (skips with a reason outside CI).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const dovecot = require('@mailgate/dovecot');
const { writeListMbox } = require('@mailgate/test-support/list-mail');
const { runImport } = require('@mailgate/importer');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

const skipReason = skipOutsideCI(__filename, dovecotMissing());
const d = skipReason ? describe.skip : describe;

// List messages taken (in file order): enough for every key to have hits and misses.
const LIST_MESSAGES = 1200;
const PW = 'compare pw 1';

// Issue 28's hand-made cases, as mbox entries (LF, as an mbox holds them).
const CASES = [
  [
    'From: a@example.org',
    'To: b@example.org',
    'Cc: group:;, group2: (foo) ;',
    'Cc: second@example.org, "Second, Two" <two@example.net>',
    'Subject: groups',
    'Date: Wed, 01 Aug 2018 23:30:00 -0700',
    '',
    'body one',
  ],
  [
    'From: <user-from (comment)@ (comment) domain.org>',
    'To: undisclosed-recipients:;',
    'Cc: Team: alice@example.org, "Bob B" <bob@example.org>;, carol@example.org (Carol C)',
    'Subject: comments',
    'Date: Thu, 02 Aug 2018 00:30:00 +0200',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('Hello bcache.h and DCACHE and cacheflush world\n').toString('base64'),
    '--b1',
    'Content-Type: message/rfc822',
    '',
    'From: inner@example.org',
    'Subject: inner message',
    '',
    'inner plain zorglub',
    '--b1',
    'Content-Type: text/x-patch; name="fix.diff"',
    'Content-Disposition: attachment; filename="fix.diff"',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    '--- a/bcache.c',
    'R4000 =3D cachefl=',
    'ush',
    '--b1--',
  ],
  ['From: nodate@example.org', 'Subject: no date', '', 'no date here'],
  ['From: y@example.org', 'Subject: far west', 'Date: 31 Jul 2018 23:59:59 -1200', '', 'plain'],
];

const QUERIES = [
  'BODY cache',
  'BODY R4000',
  'BODY "r4000 = cacheflush"',
  'BODY zorglub',
  'BODY "inner message"',
  'BODY happy',
  'BODY free',
  'BODY patch',
  'BODY linux',
  'BODY "http://"',
  'BODY "-----"',
  'BODY zzqqxx-absent',
  'TEXT cache',
  'TEXT free',
  'TEXT razor',
  'TEXT "content-type"',
  'TEXT "text/x-patch"',
  'TEXT "inner message"',
  'TEXT "x-mailer"',
  'FROM user-from@domain.org',
  'FROM comment',
  'FROM "<user"',
  'FROM spamassassin',
  'FROM "@"',
  'FROM "<"',
  'FROM "\\""',
  'TO "<"',
  'TO ", <"',
  'TO zzzz',
  'CC second',
  'CC foo',
  'CC exmh',
  'CC "group:;, group2:;"',
  'CC "Team: <alice"',
  'CC "\\"Bob B\\" <bob@example.org>"',
  'SUBJECT re',
  'SUBJECT "[ilug]"',
  'HEADER List-Id exmh',
  'SENTON 1-Aug-2018',
  'SENTON 2-Aug-2018',
  'SENTON 31-Jul-2018',
  'SENTON 1-Jan-1970',
  'SENTON 22-Aug-2002',
  'SENTBEFORE 1-Aug-2018',
  'SENTBEFORE 1-Sep-2002',
  'SENTSINCE 2-Aug-2018',
  'SENTSINCE 1-Oct-2002',
  'ON 22-Aug-2002',
  'SINCE 1-Oct-2002',
  'BEFORE 1-Sep-2002',
  'LARGER 10000',
  'SMALLER 2000',
  'LARGER 3000 SMALLER 3200',
  'NOT LARGER 250',
  'SEEN',
  'UNSEEN',
  'FLAGGED',
  'ANSWERED',
  'DELETED',
  'DRAFT',
  'UNFLAGGED',
  'KEYWORD $Label1',
  'NOT BODY the',
  'OR FROM razor BODY cache',
  'SEEN NOT FLAGGED',
  'RECENT',
  'NEW',
  'OLD',
  'OR SENTON 2-Aug-2018 FROM nodate',
  'SENTSINCE 1-Sep-2002 BODY free',
];

d('SEARCH answers equal Dovecot on the same mail', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-search-dc-'));
  let inst;
  let env;
  let dc;
  let mg;
  let total;

  beforeAll(async () => {
    const mbox = path.join(tmp, 'list.mbox');
    const { count } = writeListMbox(mbox, { limit: LIST_MESSAGES });
    const cases = CASES.map(
      (lines, i) => `From sender@example.org Wed Aug  1 12:00:0${i} 2018\n${lines.join('\n')}\n\n`,
    ).join('');
    fs.appendFileSync(mbox, cases);
    total = count + CASES.length;
    inst = await dovecot.start({ format: 'mbox', mail: mbox });
    env = await startPgServer({ users: { cmp: PW } });
    await runImport({
      store: env.db.store,
      kind: 'mbox',
      paths: [mbox],
      user: 'cmp',
      mailbox: 'INBOX',
      workers: 0,
      progress: false,
    });
    dc = await RawClient.connect(inst.port, inst.host);
    await dc.cmd('l', `LOGIN ${inst.user} "${inst.password}"`);
    mg = await RawClient.connect(env.port);
    await mg.cmd('l', `LOGIN cmp "${PW}"`);
    for (const c of [dc, mg]) {
      expect(await c.cmd('s', 'SELECT INBOX')).toMatch(new RegExp(`^\\* ${total} EXISTS`, 'm'));
      // The same flags on both, so the flag keys have hits and misses.
      for (const [set, flags] of [
        ['1:300', '\\Seen'],
        ['50:80,1201', '\\Flagged'],
        ['70:90', '\\Answered'],
        ['5,7,1202', '\\Deleted'],
        ['11', '\\Draft'],
        ['100:110', '$Label1'],
      ]) {
        expect(await c.cmd('f', `STORE ${set} +FLAGS.SILENT (${flags})`)).toMatch(/^f OK/m);
      }
    }
  }, 300000);

  afterAll(async () => {
    for (const c of [dc, mg]) if (c) c.close();
    if (env) await env.close();
    if (inst) await inst.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function answer(c, query) {
    const r = await c.cmd('q', `SEARCH ${query}`);
    const m = /^\* SEARCH([ \d]*)\r$/m.exec(r);
    if (!m) throw new Error(`SEARCH ${query}: ${r.slice(-200)}`);
    return m[1].trim() ? m[1].trim().split(' ').map(Number) : [];
  }

  test.each(QUERIES)('SEARCH %s', async (query) => {
    const [want, got] = [await answer(dc, query), await answer(mg, query)];
    expect({ query, seqs: got }).toEqual({ query, seqs: want });
  });

  test('the comparison is not vacuous: keys have hits and misses', async () => {
    for (const q of ['BODY cache', 'SENTON 1-Aug-2018', 'CC second', 'SEEN', 'FROM "<user"']) {
      const n = (await answer(dc, q)).length;
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThan(total);
    }
  });
});
