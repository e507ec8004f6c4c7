'use strict';

/*
 * `mailgate import imap` against a real Dovecot (issue 5): every folder with special-use
 * mapping, flags and INTERNALDATE; a re-run after 10 deliveries (dovecot-lda) imports exactly
 * those 10; flags changed upstream are picked up (with a new modseq); an import killed with
 * SIGKILL resumes without duplicates. Needs Dovecot and root (skips with a reason outside CI).
 */

const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

const { withImapClient } = dovecot;
const { importImapArgs } = require('@mailgate/test-support/import-imap');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { useCliSuite, spawnCli } = require('@mailgate/test-support/db');
const { buildLegacyMail } = require('@mailgate/test-support/legacy-corpus');
const { msg } = require('@mailgate/test-support/mail');

const corpus = corpusDir();
const skipReason = skipOutsideCI(
  __filename,
  dovecotMissing() || (corpus ? null : 'shared corpus not found'),
);
const d = skipReason ? describe.skip : describe;

d('mailgate import imap from Dovecot', () => {
  const ctx = useCliSuite('imap');
  let inst;
  const N = 1200;
  const env = () => ({ MG_IMAP_PW: inst.password, MAILGATE_HOME: path.join(ctx.tmp, 'home') });
  const args = (user) => importImapArgs(inst, user);
  const count = async (user, mailbox) => {
    const r = await ctx.db.knex.raw(
      `SELECT count(*)::int AS n, count(DISTINCT (s.source_meta->>'imapUid'))::int AS distinct_uids
         FROM messages m JOIN users u ON u.id = m.user_id
         JOIN mailboxes b ON b.id = m.mailbox_id
         JOIN message_sources s ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
        WHERE u.name = ? AND b.name = ? AND NOT m.expunged`,
      [user, mailbox],
    );
    return r.rows[0];
  };

  beforeAll(async () => {
    const src = buildLegacyMail(
      path.join(corpus, 'enron', 'maildir'),
      N,
      path.join(ctx.tmp, 'src'),
    );
    inst = await dovecot.start({ format: 'maildir', mail: src.maildir, link: true });
    // Two more folders: a special-use one (Sent) and a nested one.
    for (let i = 0; i < 3; i++) {
      await dovecot.deliver(inst.dir, msg({ subject: `sent ${i}`, body: `sent body ${i}\n` }), {
        mailbox: 'Sent',
      });
    }
    await dovecot.deliver(inst.dir, msg({ subject: 'nested', body: 'n\n' }), {
      mailbox: 'Work/Projects',
    });
    await withImapClient(inst, async (c) => {
      // Mark Sent as \Sent (RFC 6154) and set a few flags and a keyword upstream.
      await c.mailboxOpen('INBOX');
      await c.messageFlagsAdd('1:3', ['\\Seen', '$Important'], { uid: true });
    });
  }, 300000);

  afterAll(async () => {
    if (inst) await inst.stop();
  });

  test('imports every folder with flags, keywords and IMAP identity', async () => {
    const r = ctx.cli(args('mig'), { env: env() });
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(N + 4);
    expect((await count('mig', 'INBOX')).n).toBe(N);
    expect((await count('mig', 'Sent')).n).toBe(3);
    expect((await count('mig', 'Work/Projects')).n).toBe(1);
    const flagged = await ctx.db.knex.raw(
      `SELECT m.flags, m.keywords, s.source_meta FROM messages m
         JOIN message_sources s ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
         JOIN mailboxes b ON b.id = m.mailbox_id
        WHERE b.name = 'INBOX' AND (s.source_meta->>'imapUid')::int = 2`,
    );
    expect(flagged.rows[0].flags).toContain('\\Seen');
    expect(flagged.rows[0].keywords).toEqual(['$Important']);
    expect(flagged.rows[0].source_meta).toMatchObject({ imapUid: 2, folder: 'INBOX' });
    expect(flagged.rows[0].source_meta.imapUidValidity).toMatch(/^\d+$/);
    // The password never appears in the output.
    expect(r.stdout + r.stderr).not.toContain(inst.password);
  });

  test('a re-run after 10 deliveries imports exactly those 10 and picks up flag changes', async () => {
    for (let i = 0; i < 10; i++) {
      await dovecot.deliver(inst.dir, msg({ subject: `new ${i}`, body: `fresh mail ${i}\n` }));
    }
    await withImapClient(inst, async (c) => {
      await c.mailboxOpen('INBOX');
      await c.messageFlagsAdd('10:12', ['\\Flagged'], { uid: true });
      await c.messageFlagsRemove('1', ['\\Seen'], { uid: true });
    });
    const before = await ctx.db.knex.raw(
      "SELECT highestmodseq FROM mailboxes WHERE name = 'INBOX' AND user_id = (SELECT id FROM users WHERE name = 'mig')",
    );
    const r = ctx.cli(args('mig'), { env: env() });
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(10);
    expect(r.json.messages).toBe(10);
    expect((await count('mig', 'INBOX')).n).toBe(N + 10);
    const rows = await ctx.db.knex.raw(
      `SELECT (s.source_meta->>'imapUid')::int AS iu, m.flags, m.modseq FROM messages m
         JOIN message_sources s ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
         JOIN mailboxes b ON b.id = m.mailbox_id
        WHERE b.name = 'INBOX' AND (s.source_meta->>'imapUid')::int IN (1, 10, 11, 12)
        ORDER BY 1`,
    );
    expect(rows.rows.map((x) => [x.iu, x.flags])).toEqual([
      [1, []],
      [10, ['\\Flagged']],
      [11, ['\\Flagged']],
      [12, ['\\Flagged']],
    ]);
    for (const x of rows.rows)
      expect(Number(x.modseq)).toBeGreaterThan(Number(before.rows[0].highestmodseq));
    // And once more: nothing new, nothing changed.
    const again = ctx.cli(args('mig'), { env: env() });
    expect(again.json.imported).toBe(0);
  });

  test('an import killed with SIGKILL resumes without duplicates', async () => {
    const child = spawnCli(args('killed'), { url: ctx.db.url, env: env() });
    // Kill once some batches are committed (rows visible), before the end.
    const deadline = Date.now() + 60000;
    for (;;) {
      const n = (await count('killed', 'INBOX')).n;
      if (n > 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const partial = (await count('killed', 'INBOX')).n;
    expect(partial).toBeLessThan(N + 10);
    const r = ctx.cli(args('killed'), { env: env() });
    expect(r.code).toBe(0);
    expect(r.json.imported).toBe(N + 10 + 4 - partial);
    const c = await count('killed', 'INBOX');
    expect(c.n).toBe(N + 10);
    expect(c.distinct_uids).toBe(N + 10);
  });
});
