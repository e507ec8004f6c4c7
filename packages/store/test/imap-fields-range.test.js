'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PgStore } = require('@mailgate/store');
const { runImport } = require('@mailgate/importer');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

/*
 * The packed read of a list view (imap-meta-ops.js getImapFieldsRange, issue 35.3): the
 * statement neither sorts nor counts characters; the store turns PostgreSQL's byte lengths into
 * character offsets and puts rows stored out of uid order back in order. Checked against the
 * per-message read (getImapMeta) over mail whose header lines hold 8-bit bytes (latin1
 * characters past U+007F: two bytes each in the database) and rows stored out of uid order.
 */
describe('getImapFieldsRange', () => {
  let db;
  let tmp;
  let store;
  let user;
  let mb;
  const N = 1200; // three rows of the packed read (CHUNK_UIDS 512)

  beforeAll(async () => {
    db = await createTestDatabase();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-fields-range-'));
    store = new PgStore(db.knex, { listCacheRows: 0 });
    const list = [];
    for (let i = 1; i <= N; i++) {
      // Every third message: 8-bit bytes (no charset) in its Subject and From, some at the
      // very start and end of its lines.
      const odd = i % 3 === 0;
      const subject = odd ? `\xe9t\xe9 ${i} caf\xe9 \xff` : `plain ${i}`;
      const from = odd ? `\xc5sa <a${i}@example.org>` : `a${i} <a${i}@example.org>`;
      list.push(Buffer.from(msg({ subject, from, body: `body ${i}\n` }).toString(), 'latin1'));
    }
    const file = path.join(tmp, 'box.mbox');
    fs.writeFileSync(file, mboxOf(list));
    await runImport({
      store,
      kind: 'mbox',
      paths: [file],
      user: 'fr',
      mailbox: 'INBOX',
      workers: 0,
      progress: false,
    });
    user = await store.getUser('fr');
    mb = await store.getMailbox(user.id, 'INBOX');
  });
  afterAll(async () => {
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** The packed read of lo..hi, message by message, as getImapMeta reads each. */
  const agrees = async (lo, hi, part = 'fields') => {
    const packed = await store.getImapFieldsRange(user.id, mb.id, lo, hi, part);
    const uids = Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);
    const each = await store.getImapMeta(user.id, mb.id, uids, { parts: [part] });
    expect([...packed.uids]).toEqual([...each.keys()].sort((a, b) => a - b));
    expect(Math.max(...packed.ends)).toBe(packed.text.length);
    packed.uids.forEach((uid, j) => {
      const m = each.get(uid);
      expect(packed.sizes[j]).toBe(m.size);
      expect(packed.text.slice(packed.starts[j], packed.ends[j])).toBe(m[part]);
    });
    return packed;
  };

  test('8-bit header bytes: character offsets from byte lengths, every message exact', async () => {
    const packed = await agrees(1, N);
    expect(packed.uids).toHaveLength(N);
    // The kept lines hold characters past U+007F, so byte and character offsets differ.
    expect(packed.text).toMatch(/\xe9t\xe9/);
    await agrees(7, 200);
    await agrees(500, 1100);
    // The ENVELOPEs (a first sync's read) the same way; 8-bit bytes in them too.
    const env = await agrees(1, N, 'envelope');
    expect(env.text).toMatch(/\xe9t\xe9/);
    await expect(store.getImapFieldsRange(user.id, mb.id, 1, N, 'raw')).rejects.toMatchObject({
      code: 'INVALID_PARAMETER',
    });
    // A sparse range (uids near 2^32) is one grouping over the uids that exist, with onPart
    // too: no work per empty chunk of the range.
    const sparse = await store.getImapFieldsRange(user.id, mb.id, N - 1, 4294967295, 'fields');
    expect([...sparse.uids]).toEqual([N - 1, N]);
    const got = [];
    await store.getImapFieldsRange(user.id, mb.id, N - 1, 4294967295, 'fields', {
      onPart: (p) => got.push(...p.uids),
    });
    expect(got).toEqual([N - 1, N]);
  });

  test('rows stored out of uid order come back in uid order', async () => {
    // Some messages' kept rows written again: they now lie after the others in the table.
    const gone = [2, 3, 50, 51, 150, 600, 1100];
    const kept = await store.getImapMeta(user.id, mb.id, gone);
    // A message has both rows or neither (the lines in message_imap_lines).
    for (const table of ['message_imap', 'message_imap_lines']) {
      await db.knex.raw(
        `DELETE FROM ${table} WHERE user_id = ? AND mailbox_id = ? AND uid = ANY(?::bigint[])`,
        [user.id, mb.id, gone],
      );
    }
    await store.putImapMeta(
      user.id,
      [...gone].reverse().map((uid) => ({ mailboxId: mb.id, uid, ...kept.get(uid) })),
    );
    for (const table of ['message_imap', 'message_imap_lines']) {
      const scan = await db.knex.raw(
        `SELECT uid FROM ${table} WHERE user_id = ? AND mailbox_id = ? ORDER BY ctid`,
        [user.id, mb.id],
      );
      const order = scan.rows.map((r) => Number(r.uid));
      expect(order).not.toEqual([...order].sort((a, b) => a - b));
    }
    const packed = await agrees(1, N);
    expect(packed.uids).toHaveLength(N);
    await agrees(1, N, 'envelope');
  });

  test('onPart: the same read handed over in parts as the rows come, in uid order', async () => {
    for (const part of ['fields', 'envelope']) {
      const whole = await store.getImapFieldsRange(user.id, mb.id, 3, N - 2, part);
      const parts = [];
      const ret = await store.getImapFieldsRange(user.id, mb.id, 3, N - 2, part, {
        onPart: async (p) => {
          // Awaited one at a time: the next part waits for this one's handler.
          await new Promise((r) => setImmediate(r));
          parts.push(p);
        },
      });
      expect(ret).toBeUndefined();
      expect(parts.length).toBe(3); // a row per 512 uids
      const uids = parts.flatMap((p) => [...p.uids]);
      expect(uids).toEqual([...whole.uids]);
      const values = parts.flatMap((p) =>
        [...p.uids].map((_, j) => p.text.slice(p.starts[j], p.ends[j])),
      );
      expect(values).toEqual(
        [...whole.uids].map((_, j) => whole.text.slice(whole.starts[j], whole.ends[j])),
      );
      expect(parts.flatMap((p) => [...p.sizes])).toEqual([...whole.sizes]);
    }
    // No mailbox: MAILBOX_NOT_FOUND; a range without messages: no part.
    await expect(
      store.getImapFieldsRange(user.id, { name: 'Nope' }, 1, 5, 'fields', { onPart: () => {} }),
    ).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
    const none = [];
    await store.getImapFieldsRange(user.id, mb.id, N + 10, N + 20, 'fields', {
      onPart: (p) => none.push(p),
    });
    expect(none).toEqual([]);
  });

  test('onPart throwing: the rest is read and dropped, the error comes back, the pool is whole', async () => {
    const boom = new Error('consumer gone');
    let calls = 0;
    await expect(
      store.getImapFieldsRange(user.id, mb.id, 1, N, 'fields', {
        onPart: () => {
          calls++;
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
    // Every pooled connection is usable again (a busy one would fail the suite's guard).
    const again = await Promise.all(
      Array.from({ length: 4 }, () => store.getImapFieldsRange(user.id, mb.id, 1, N, 'fields')),
    );
    for (const p of again) expect(p.uids).toHaveLength(N);
  });
});
