'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const { deriveRow } = require('@mailgate/importer');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');

// Issue 30.6: the store compresses each message's raw bytes itself (store/lib/raw-codec.js),
// because PostgreSQL leaves every row under ~2 KB uncompressed. Every reader must still get
// the exact bytes: FETCH (whole and prefix), getMessage, export's stream, verify's byte check,
// COPY (the stored form copied as is), and rows stored before the codec existed.
describe('store: raw sources compressed by the store, byte-exact on every read', () => {
  const ctx = useCliSuite('rawc');
  let db;
  let user;

  // Hostile bytes: NUL, 8-bit without charset, a lone CR, CRLF/LF mixes, a line of 0xff.
  const hostile = Buffer.concat([
    Buffer.from('From: a@example.org\r\nSubject: caf\xe9 \x00 nul\n', 'latin1'),
    Buffer.from('X-Odd: \r\r\n\n'),
    Buffer.from([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0x80, 0x0a]),
    Buffer.from('Body with 8-bit: \xe4\xf6\xfc and a lone \r in it.\n'.repeat(20), 'latin1'),
  ]);
  const small = msg({ subject: 'small', body: 'Short note.\n' });
  const wordy = msg({
    subject: 'wordy',
    body: 'Please find the figures for the quarter attached below.\n'.repeat(40),
  });
  // Over the codec's limit (1 MiB): left to PostgreSQL's TOAST compression, prefix reads cut
  // by the server.
  const huge = msg({
    subject: 'huge',
    body: 'x'.repeat(64) + '\n'.repeat(1) + 'y'.repeat(1 << 20),
  });
  // Random bytes do not get smaller: stored as they are.
  const noise = Buffer.concat([Buffer.from('Subject: noise\n\n'), crypto.randomBytes(8192)]);
  const empty = Buffer.alloc(0);
  const all = { hostile, small, wordy, huge, noise, empty };
  const uidOf = {};
  let inbox;

  // What APPEND stores for bytes the parser refuses (service pg-backend.js): a bare row.
  const rowOf = (raw) => {
    const d = deriveRow(raw);
    if (d.ok) return d.row;
    return { size: raw.length, to_addrs: '[]', cc_addrs: '[]', has_attachments: false };
  };

  beforeAll(async () => {
    db = ctx.db;
    user = await db.store.ensureUser('rawc');
    inbox = await db.store.ensureMailbox(user.id, 'INBOX');
    for (const [name, raw] of Object.entries(all)) {
      const r = await db.store.appendMessage(user.id, inbox.id, { raw, row: rowOf(raw) });
      uidOf[name] = r ? r.uid : undefined;
    }
  });

  const stored = async (mailboxId) =>
    (
      await db.knex.raw(
        `SELECT uid, raw_codec, octet_length(raw) AS len FROM message_sources
          WHERE user_id = ? AND mailbox_id = ? ORDER BY uid`,
        [user.id, mailboxId],
      )
    ).rows.map((x) => ({ uid: Number(x.uid), codec: x.raw_codec, len: Number(x.len) }));

  test('small and wordy messages are stored compressed by the store, the rest as they are', async () => {
    expect(Object.values(uidOf).every((u) => Number.isInteger(u))).toBe(true);
    const byUid = new Map((await stored(inbox.id)).map((r) => [r.uid, r]));
    // A message under 2 KB is stored smaller than its bytes: PostgreSQL alone never did that.
    expect(small.length).toBeLessThan(2000);
    expect(byUid.get(uidOf.small).codec).toBe(1);
    expect(byUid.get(uidOf.small).len).toBeLessThan(small.length);
    expect(byUid.get(uidOf.wordy).codec).toBe(1);
    expect(byUid.get(uidOf.wordy).len * 5).toBeLessThan(wordy.length);
    expect(byUid.get(uidOf.hostile).codec).toBe(1);
    expect(byUid.get(uidOf.huge)).toMatchObject({ codec: 0, len: huge.length });
    expect(byUid.get(uidOf.noise)).toMatchObject({ codec: 0, len: noise.length });
    expect(byUid.get(uidOf.empty)).toMatchObject({ codec: 0, len: 0 });
  });

  test('every read gives the exact bytes back: whole, prefix, getMessage, stream, verify', async () => {
    const uids = Object.values(uidOf);
    const whole = await db.store.sourcesFor(user.id, inbox.id, uids);
    const prefix = await db.store.sourcesFor(user.id, inbox.id, uids, { prefix: 37 });
    const streamed = new Map();
    for await (const row of db.store.streamSources(user.id, inbox.id)) streamed.set(row.uid, row);
    for (const [name, raw] of Object.entries(all)) {
      const uid = uidOf[name];
      expect([name, whole.find((r) => r.uid === uid).raw.equals(raw)]).toEqual([name, true]);
      expect([name, prefix.find((r) => r.uid === uid).raw.equals(raw.subarray(0, 37))]).toEqual([
        name,
        true,
      ]);
      expect([name, (await db.store.getMessage(user.id, inbox.id, uid)).raw.equals(raw)]).toEqual([
        name,
        true,
      ]);
      expect([name, Buffer.from(streamed.get(uid).raw).equals(raw)]).toEqual([name, true]);
      expect(streamed.get(uid)).not.toHaveProperty('raw_codec');
    }
    const keys = Object.values(all).map((raw) => ({
      hash: crypto.createHash('sha256').update(raw).digest(),
      dup: 0,
    }));
    const found = await db.store.lookupKeys(user.id, inbox.id, keys, { checkBytes: true });
    expect([...found.values()].map((x) => x.intact)).toEqual(keys.map(() => true));
  });

  test('a packed row whose bytes changed is not intact for verify', async () => {
    const box = await db.store.ensureMailbox(user.id, 'Damaged');
    const r = await db.store.appendMessage(user.id, box.id, { raw: wordy, row: rowOf(wordy) });
    // The stream of another message: decodes, but to other bytes.
    await db.knex.raw(
      `UPDATE message_sources SET raw = (SELECT raw FROM message_sources
          WHERE user_id = ? AND mailbox_id = ? AND uid = ?)
        WHERE user_id = ? AND mailbox_id = ? AND uid = ?`,
      [user.id, inbox.id, uidOf.small, user.id, box.id, r.uid],
    );
    const hash = crypto.createHash('sha256').update(wordy).digest();
    const found = await db.store.lookupKeys(user.id, box.id, [{ hash, dup: 0 }], {
      checkBytes: true,
    });
    expect([...found.values()].map((x) => x.intact)).toEqual([false]);
  });

  test('COPY copies the stored form as is, and the copy reads back exactly', async () => {
    const dst = await db.store.ensureMailbox(user.id, 'Copies');
    await db.store.copyMessages(user.id, inbox.id, Object.values(uidOf), dst.id);
    const src = await stored(inbox.id);
    const copies = await stored(dst.id);
    expect(copies.map((c) => [c.codec, c.len])).toEqual(src.map((c) => [c.codec, c.len]));
    const rows = await db.store.sourcesFor(
      user.id,
      dst.id,
      copies.map((c) => c.uid),
    );
    const want = Object.values(uidOf)
      .map((uid, i) => [uid, Object.values(all)[i]])
      .sort((a, b) => a[0] - b[0])
      .map(([, raw]) => raw.toString('hex'));
    expect(rows.map((r) => r.raw.toString('hex'))).toEqual(want);
  });

  test('an import stores compressed rows too, and rows stored before the codec still read', async () => {
    const { user: u, inbox: box } = await importInbox(
      db.store,
      path.join(ctx.tmp, 'in.mbox'),
      [small, wordy],
      'rawc2',
    );
    const rows = (
      await db.knex.raw(
        'SELECT uid, raw_codec FROM message_sources WHERE user_id = ? ORDER BY uid',
        [u.id],
      )
    ).rows;
    expect(rows.map((x) => x.raw_codec)).toEqual([1, 1]);
    // A row as every writer stored it before 20261201140100_raw_codec.js: the bytes, codec 0.
    await db.knex.raw(
      'UPDATE message_sources SET raw = ?, raw_codec = 0 WHERE user_id = ? AND uid = ?',
      [wordy, u.id, rows[1].uid],
    );
    const [old] = await db.store.sourcesFor(u.id, box.id, [Number(rows[1].uid)]);
    expect(old.raw.equals(wordy)).toBe(true);
    const [cut] = await db.store.sourcesFor(u.id, box.id, [Number(rows[1].uid)], { prefix: 10 });
    expect(cut.raw.equals(wordy.subarray(0, 10))).toBe(true);
  });
});
