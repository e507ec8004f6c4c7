'use strict';

const { deriveRow } = require('@mailgate/importer');
const { useTestDatabase } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

/*
 * The two migrations of 2026-11-28 that move stored bytes (20261203210100: the list-view lines
 * into message_imap_lines; 20261203240100: word vectors without positions) go down and up again
 * with mail in the store and keep every line and every phrase answer — on a single PostgreSQL
 * and on Citus, whose down of the first failed (SET STORAGE on a distributed table; review
 * finding 6, s7).
 */
describe('lines and stripped-words migrations, down and up with mail stored', () => {
  const ctx = useTestDatabase();

  test('down and up keep the lines and the phrase answers', async () => {
    const store = ctx.db.store;
    const k = ctx.db.knex;
    const u = (await store.ensureUser('mig')).id;
    await store.createMailbox(u, 'INBOX');
    for (let i = 0; i < 5; i++) {
      const raw = msg({ subject: `s${i} alpha beta`, body: `gamma delta ${i}\n` });
      await store.appendMessage(u, { name: 'INBOX' }, { raw, row: deriveRow(raw).row });
    }
    const snap = async () => ({
      lines: (
        await k.raw(
          'SELECT uid, size, fields FROM message_imap_lines WHERE user_id = ? ORDER BY uid',
          [u],
        )
      ).rows,
      phrase: (await store.search(u, '"gamma delta"', { mailbox: { name: 'INBOX' } })).hits.length,
      subject: (await store.search(u, '"alpha beta"', { mailbox: { name: 'INBOX' } })).hits.length,
    });
    const before = await snap();
    expect(before.lines).toHaveLength(5);
    expect(before.lines[0].fields).toContain('alpha beta');
    expect(before).toMatchObject({ phrase: 5, subject: 5 });
    await k.migrate.down({ name: '20261203240100_words_stripped.js' });
    await k.migrate.down({ name: '20261203210100_message_imap_lines.js' });
    const fields = await k.raw('SELECT count(*)::int AS n FROM message_imap WHERE user_id = ?', [
      u,
    ]);
    expect(fields.rows[0].n).toBe(5);
    await k.migrate.latest();
    expect(await snap()).toEqual(before);
  });
});
