'use strict';

const { BodyCache, ENTRY_OVERHEAD } = require('../lib/body-cache');
const { mailboxScope } = require('../lib/cache');

/*
 * The accounting of the IMAP server's cache of message bytes (lib/body-cache.js), without a
 * server: what it holds is counted exactly, given back exactly, and a private copy.
 * test/body-cache.pg.test.js checks it through FETCH on the real store.
 */

const scope = (user, id, uidvalidity = 7) =>
  mailboxScope(user, { name: 'INBOX', identity: String(id), uidvalidity });

test('entries are private copies, counted exactly and given back exactly', () => {
  const c = new BodyCache({ maxBytes: 1 << 20 });
  const slab = Buffer.alloc(8192, 0x61);
  const wire = slab.subarray(100, 1100);
  expect(c.set('ann', scope('ann', 1), 5, wire)).toBe(true);
  const got = c.get('ann', scope('ann', 1), 5);
  expect(got.equals(wire)).toBe(true);
  // Its own allocation of its own size: the 8 KB slab is not kept alive by the cache.
  expect(got.buffer).not.toBe(slab.buffer);
  expect(got.buffer.byteLength).toBe(1000);
  c.set('ann', scope('ann', 1), 6, Buffer.alloc(300));
  c.set('ann', scope('ann', 2), 5, Buffer.alloc(200));
  expect(c.stats()).toMatchObject({ bytes: 1500 + 3 * ENTRY_OVERHEAD, entries: 3 });
  // Another mailbox's uid 5 and another user's are other entries.
  expect(c.get('ann', scope('ann', 2), 5).length).toBe(200);
  expect(c.get('bob', scope('bob', 1), 5)).toBeUndefined();
  c.dropUids('ann', scope('ann', 1), [5]);
  expect(c.get('ann', scope('ann', 1), 5)).toBeUndefined();
  c.dropMailbox('ann', '1');
  expect(c.stats()).toMatchObject({ bytes: 200 + ENTRY_OVERHEAD, entries: 1 });
  c.dropMailbox('ann', '2');
  expect(c.stats()).toMatchObject({ bytes: 0, entries: 0 });
  expect(c.holds('ann')).toBe(false);
});

test('0 bytes caches nothing; the share and the total bound what is held', () => {
  const off = new BodyCache({ maxBytes: 0 });
  expect(off.enabled).toBe(false);
  expect(off.set('ann', scope('ann', 1), 1, Buffer.alloc(10))).toBe(false);
  expect(off.stats().bytes).toBe(0);
  const each = 1000 + ENTRY_OVERHEAD;
  const c = new BodyCache({ maxBytes: 4 * each, userBytes: 2 * each });
  for (let uid = 1; uid <= 5; uid++) c.set('ann', scope('ann', 1), uid, Buffer.alloc(1000));
  expect(c.stats().users.get('ann')).toBe(2 * each); // its share: its newest two
  expect(c.get('ann', scope('ann', 1), 5)).toBeDefined();
  expect(c.get('ann', scope('ann', 1), 3)).toBeUndefined();
  for (let uid = 1; uid <= 2; uid++) c.set('bob', scope('bob', 2), uid, Buffer.alloc(1000));
  c.get('ann', scope('ann', 1), 4); // ann used last: the next user over the total takes bob's
  for (let uid = 1; uid <= 2; uid++) c.set('cy', scope('cy', 3), uid, Buffer.alloc(1000));
  const st = c.stats();
  expect(st.bytes).toBe(4 * each);
  expect(st.users.get('bob') || 0).toBe(0);
  expect(st.users.get('ann')).toBe(2 * each);
  // An entry over the cap is never kept.
  const capped = new BodyCache({ maxBytes: 1 << 20, maxEntryBytes: 500 });
  expect(capped.set('ann', scope('ann', 1), 1, Buffer.alloc(400))).toBe(false);
  expect(capped.set('ann', scope('ann', 1), 1, Buffer.alloc(300))).toBe(true);
});

test('a Buffer that owns its allocation is kept as it is, not copied (issue 35, first fetch)', () => {
  const c = new BodyCache({ maxBytes: 1 << 20 });
  // FETCH's CRLF form (crlf.js `own`): an allocation of its own size.
  const own = Buffer.allocUnsafeSlow(3000).fill(0x62);
  expect(c.set('ann', scope('ann', 1), 5, own)).toBe(true);
  expect(c.get('ann', scope('ann', 1), 5)).toBe(own);
  // A store-decoded message with a little room behind it (raw-codec.js sizes the output to
  // the message): kept as it is, its whole allocation counted.
  const roomy = Buffer.allocUnsafeSlow(3300).subarray(0, 3000);
  expect(c.set('ann', scope('ann', 1), 6, roomy)).toBe(true);
  expect(c.get('ann', scope('ann', 1), 6)).toBe(roomy);
  expect(c.stats().bytes).toBe(3000 + 3300 + 2 * ENTRY_OVERHEAD);
  // A slice of Node's shared pool or with much unused behind it: copied, as before.
  const pooled = Buffer.from('x'.repeat(100));
  expect(pooled.buffer.byteLength).toBeGreaterThan(100); // from the 8 KiB pool
  c.set('ann', scope('ann', 1), 7, pooled);
  expect(c.get('ann', scope('ann', 1), 7)).not.toBe(pooled);
  expect(c.get('ann', scope('ann', 1), 7).buffer.byteLength).toBe(100);
  const loose = Buffer.allocUnsafeSlow(16384).subarray(0, 3000);
  c.set('ann', scope('ann', 1), 8, loose);
  expect(c.get('ann', scope('ann', 1), 8).buffer.byteLength).toBe(3000);
  expect(c.stats().bytes).toBe(3000 + 3300 + 100 + 3000 + 4 * ENTRY_OVERHEAD);
  // Given back exactly what was counted.
  c.dropMailbox('ann', '1');
  expect(c.stats()).toMatchObject({ bytes: 0, entries: 0 });
});
