'use strict';

/*
 * UIDs clients already know (issue 12 item 3), on a real Dovecot: `import imap` keeps the
 * upstream UIDVALIDITY and UIDs (gaps included, UIDNEXT never below upstream's), a re-run keeps
 * the new ones too; an imported Dovecot Maildir keeps its dovecot-uidlist numbering; where the
 * uids cannot be kept (the mailbox holds other messages, or a local message took an upstream
 * uid) the mailbox's UIDVALIDITY is not the upstream's, no uid is reused, and the report warns
 * UIDS_NOT_KEPT. Needs Dovecot and root (skips with a reason outside CI).
 */

const { importImapArgs } = require('@mailgate/test-support/import-imap');
const fs = require('node:fs');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const d = skipOutsideCI(__filename, dovecotMissing()) ? describe.skip : describe;

d('UIDs and UIDVALIDITY kept from Dovecot', () => {
  const ctx = useCliSuite('kept-uids');
  let inst;
  // One message per batch: batches load while earlier ones commit, and a resumed import starts
  // after committed batches; the uids must be kept across them all.
  const env = () => ({
    MG_IMAP_PW: inst.password,
    MAILGATE_HOME: path.join(ctx.tmp, 'home'),
    MAILGATE_BATCH_SIZE: '1',
  });
  const importImap = (user) => ctx.cli(importImapArgs(inst, user), { env: env() });
  const upstream = (box = 'INBOX') =>
    dovecot.withImapClient(inst, async (c) => {
      const mb = await c.mailboxOpen(box);
      const msgs = [];
      for await (const m of c.fetch('1:*', {
        uid: true,
        flags: true,
        envelope: true,
        source: true,
      })) {
        msgs.push({
          uid: m.uid,
          subject: m.envelope.subject,
          flags: [...m.flags].filter((f) => f !== '\\Recent').sort(),
          sha: sha(m.source),
        });
      }
      return { uidValidity: Number(mb.uidValidity), uidNext: Number(mb.uidNext), msgs };
    });
  const local = async (user, box = 'INBOX') => {
    const mb = (
      await ctx.db.knex.raw(
        `SELECT b.uidvalidity, b.uidnext FROM mailboxes b JOIN users u ON u.id = b.user_id
          WHERE u.name = ? AND b.name = ?`,
        [user, box],
      )
    ).rows[0];
    const rows = await ctx.db.knex.raw(
      `SELECT m.user_id, m.mailbox_id, m.uid, m.subject, m.flags FROM messages m
         JOIN users u ON u.id = m.user_id JOIN mailboxes b ON b.id = m.mailbox_id
        WHERE u.name = ? AND b.name = ? AND NOT m.expunged ORDER BY m.uid`,
      [user, box],
    );
    // The bytes as the store gives them back (it keeps them compressed, store raw-codec.js).
    const first = rows.rows[0];
    const bytes = first
      ? await ctx.db.store.sourcesFor(
          first.user_id,
          first.mailbox_id,
          rows.rows.map((r) => Number(r.uid)),
        )
      : [];
    const shaOf = new Map(bytes.map((b) => [b.uid, sha(b.raw)]));
    return {
      uidValidity: Number(mb.uidvalidity),
      uidNext: Number(mb.uidnext),
      msgs: rows.rows.map((r) => ({
        uid: Number(r.uid),
        subject: r.subject,
        flags: [...r.flags].sort(),
        sha: shaOf.get(Number(r.uid)),
      })),
    };
  };

  beforeAll(async () => {
    inst = await dovecot.start({ format: 'maildir' });
    for (let i = 1; i <= 6; i++) {
      await dovecot.deliver(inst.dir, msg({ subject: `m${i}`, body: `body ${i}\n` }));
    }
    await dovecot.withImapClient(inst, async (c) => {
      await c.mailboxOpen('INBOX');
      // Gaps, including the last uid: UIDNEXT (7) is above the highest uid left (5).
      await c.messageDelete('2,6', { uid: true });
      await c.messageFlagsAdd('3', ['\\Seen', '\\Answered'], { uid: true });
    });
  }, 120000);

  afterAll(async () => {
    if (inst) await inst.stop();
  });

  test('import imap keeps UIDVALIDITY, UIDs (with gaps), flags; UIDNEXT not below upstream', async () => {
    const up = await upstream();
    expect(up.msgs.map((m) => m.uid)).toEqual([1, 3, 4, 5]);
    const r = importImap('kept');
    expect(r.code).toBe(0);
    expect(r.json.warnings).toEqual([]);
    const mine = await local('kept');
    expect(mine.uidValidity).toBe(up.uidValidity);
    expect(mine.msgs).toEqual(up.msgs);
    expect(mine.uidNext).toBe(up.uidNext);
  });

  test('a re-run keeps the uids of new upstream mail', async () => {
    await dovecot.deliver(inst.dir, msg({ subject: 'm7', body: 'body 7\n' }));
    await dovecot.deliver(inst.dir, msg({ subject: 'm8', body: 'body 8\n' }));
    const r = importImap('kept');
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(2);
    const up = await upstream();
    const mine = await local('kept');
    expect(mine.msgs.map((m) => m.uid)).toEqual([1, 3, 4, 5, 7, 8]);
    expect(mine.msgs).toEqual(up.msgs);
    expect(mine.uidValidity).toBe(up.uidValidity);
  });

  test('an imported Dovecot Maildir keeps its dovecot-uidlist UIDs and UIDVALIDITY', async () => {
    const up = await upstream();
    const maildir = path.join(inst.home, 'Maildir');
    expect(fs.readFileSync(path.join(maildir, 'dovecot-uidlist'), 'utf8')).toMatch(
      new RegExp(`V${up.uidValidity}\\b`),
    );
    const r = ctx.cli(['import', 'maildir', maildir, '--user', 'md', '--json', '--quiet'], {
      env: env(),
    });
    expect(r.json.warnings).toEqual([]);
    expect(r.code).toBe(0);
    const mine = await local('md');
    expect(mine.uidValidity).toBe(up.uidValidity);
    // Bytes differ by line ends only (the files are LF, IMAP serves CRLF).
    const noSha = (m) => ({ uid: m.uid, subject: m.subject, flags: m.flags });
    expect(mine.msgs.map(noSha)).toEqual(up.msgs.map(noSha));
    expect(mine.uidNext).toBeGreaterThanOrEqual(up.uidNext);
  });

  test('a mailbox with other messages gets no upstream uids: own UIDVALIDITY, warning', async () => {
    const file = path.join(ctx.tmp, 'inbox.mbox');
    fs.writeFileSync(file, mboxOf([msg({ subject: 'local 1' }), msg({ subject: 'local 2' })]));
    expect(ctx.cli(['import', 'mbox', file, '--user', 'mixed', '--json', '--quiet']).code).toBe(0);
    const before = await local('mixed');
    const r = importImap('mixed');
    expect(r.code).toBe(0);
    expect(r.json.warnings.map((w) => w.code)).toEqual(['UIDS_NOT_KEPT']);
    const up = await upstream();
    const mine = await local('mixed');
    expect(mine.uidValidity).not.toBe(up.uidValidity);
    expect(mine.uidValidity).toBe(before.uidValidity);
    // The local messages keep 1 and 2; upstream's follow, allocated, never reusing a uid.
    expect(mine.msgs.map((m) => m.uid)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(mine.msgs.slice(2).map((m) => m.sha)).toEqual(up.msgs.map((m) => m.sha));
  });

  test('an upstream uid below UIDNEXT (a local message took it): new UIDVALIDITY, no reuse', async () => {
    const file = path.join(ctx.tmp, 'INBOX');
    fs.writeFileSync(file, mboxOf([msg({ subject: 'appended locally' })]));
    const before = await local('kept');
    expect(ctx.cli(['import', 'mbox', file, '--user', 'kept', '--json', '--quiet']).code).toBe(0);
    const afterLocal = await local('kept');
    const localUid = afterLocal.msgs[afterLocal.msgs.length - 1].uid;
    expect(localUid).toBe(before.uidNext);
    await dovecot.deliver(inst.dir, msg({ subject: 'm9', body: 'body 9\n' }));
    const r = importImap('kept');
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(1);
    expect(r.json.warnings.map((w) => w.code)).toEqual(['UIDS_NOT_KEPT']);
    const up = await upstream();
    const mine = await local('kept');
    expect(up.msgs[up.msgs.length - 1].uid).toBe(localUid);
    expect(mine.uidValidity).not.toBe(up.uidValidity);
    const uids = mine.msgs.map((m) => m.uid);
    expect(uids).toEqual([1, 3, 4, 5, 7, 8, localUid, localUid + 1]);
    expect(mine.msgs[mine.msgs.length - 1].sha).toBe(up.msgs[up.msgs.length - 1].sha);
    // Later runs stay on mailgate's own numbering (no warning churn, nothing re-imported).
    const again = importImap('kept');
    expect(again.json.imported).toBe(0);
    expect((await local('kept')).uidValidity).toBe(mine.uidValidity);
  });
});

function sha(buf) {
  return require('node:crypto').createHash('sha256').update(buf).digest('hex');
}
