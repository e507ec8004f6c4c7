'use strict';

const { ListViewCache, packedBytes, ENTRY_OVERHEAD } = require('../lib/list-view-cache');
const { mailboxScope } = require('../lib/cache');

/*
 * The accounting of the IMAP server's cache of packed list-view reads (lib/list-view-cache.js),
 * without a server: bytes (not string lengths) counted and given back exactly, one user's share,
 * overlapping ranges of one mailbox held once. test/list-view-abuse.pg.test.js checks it
 * through FETCH on the real store, with a heavy user beside an innocent one.
 */

const scope = (user, id, uidvalidity = 7) =>
  mailboxScope(user, { name: 'INBOX', identity: String(id), uidvalidity });

/** A packed read of uids lo..hi, `chars` characters of lines each (as the store returns). */
function packed(lo, hi, chars = 100, ch = 'a') {
  const n = hi - lo + 1;
  const uids = new Float64Array(n);
  const sizes = new Uint32Array(n);
  const starts = new Uint32Array(n);
  const ends = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    uids[i] = lo + i;
    sizes[i] = 1000;
    starts[i] = i * chars;
    ends[i] = (i + 1) * chars;
  }
  return { uids, sizes, starts, ends, text: ch.repeat(n * chars) };
}

test('bytes, not string length: typed arrays by their bytes, a two-byte string twice', () => {
  const one = packed(1, 10, 100);
  expect(packedBytes(one)).toBe(1000 + 10 * (8 + 4 + 4 + 4) + ENTRY_OVERHEAD);
  // A character past U+00FF makes V8 keep the whole string two bytes a character.
  const two = { ...one, text: `${'a'.repeat(999)}\u20ac` };
  expect(packedBytes(two)).toBe(2000 + 10 * 20 + ENTRY_OVERHEAD);
  // Plain arrays (a backend that returns them) count 8 bytes a slot.
  const plain = {
    uids: [1, 2],
    sizes: [3, 4],
    starts: [0, 3],
    ends: [3, 6],
    text: 'x'.repeat(6),
  };
  expect(packedBytes(plain)).toBe(6 + 64 + ENTRY_OVERHEAD);

  const c = new ListViewCache({ maxBytes: 1 << 20 });
  expect(c.set('ann', scope('ann', 1), 1, 10, one)).toBe(true);
  expect(c.set('ann', scope('ann', 2), 1, 10, two)).toBe(true);
  expect(c.stats()).toMatchObject({ bytes: packedBytes(one) + packedBytes(two), entries: 2 });
  c.dropMailbox('ann', '1');
  expect(c.stats()).toMatchObject({ bytes: packedBytes(two), entries: 1 });
  c.dropMailbox('ann', '2');
  expect(c.stats()).toMatchObject({ bytes: 0, entries: 0 });
  expect(c.holds('ann')).toBe(false);
});

test('a read answers any range it covers, of its own mailbox and user only', () => {
  const c = new ListViewCache({ maxBytes: 1 << 20 });
  const p = packed(1, 500);
  c.set('ann', scope('ann', 1), 1, 500, p);
  expect(c.get('ann', scope('ann', 1), 1, 500)).toBe(p);
  expect(c.get('ann', scope('ann', 1), 20, 300)).toBe(p);
  expect(c.get('ann', scope('ann', 1), 20, 501)).toBeUndefined();
  // Another UIDVALIDITY, mailbox or user: not this read.
  expect(c.get('ann', scope('ann', 1, 8), 1, 500)).toBeUndefined();
  expect(c.get('ann', scope('ann', 2), 1, 500)).toBeUndefined();
  expect(c.get('bob', scope('ann', 1), 1, 500)).toBeUndefined();
});

test('overlapping ranges: a covering read replaces those it covers; a covered one is not kept twice', () => {
  const c = new ListViewCache({ maxBytes: 1 << 20 });
  const s = scope('ann', 1);
  const tail = packed(300, 500);
  const other = packed(1, 500, 100, 'b');
  c.set('ann', s, 300, 500, tail);
  c.set('ann', scope('ann', 2), 1, 500, other); // another mailbox: untouched below
  const whole = packed(1, 600);
  c.set('ann', s, 1, 600, whole);
  expect(c.stats()).toMatchObject({
    entries: 2,
    bytes: packedBytes(whole) + packedBytes(other),
  });
  expect(c.get('ann', s, 300, 500)).toBe(whole);
  // Two sessions reading the same range at once: the second read is not held beside the first.
  expect(c.set('ann', s, 1, 600, packed(1, 600))).toBe(true);
  expect(c.set('ann', s, 5, 400, packed(5, 400))).toBe(true);
  expect(c.get('ann', s, 1, 600)).toBe(whole);
  expect(c.stats()).toMatchObject({
    entries: 2,
    bytes: packedBytes(whole) + packedBytes(other),
  });
  // Ranges that only overlap both stay (each answers what it covers), both counted.
  const more = packed(550, 900);
  c.set('ann', s, 550, 900, more);
  expect(c.get('ann', s, 700, 900)).toBe(more);
  expect(c.get('ann', s, 1, 600)).toBe(whole);
  expect(c.stats().bytes).toBe(packedBytes(whole) + packedBytes(other) + packedBytes(more));
});

test('0 bytes keeps nothing; a user takes at most a quarter; past the total the least recent user gives way', () => {
  const off = new ListViewCache({ maxBytes: 0 });
  expect(off.enabled).toBe(false);
  expect(off.set('ann', scope('ann', 1), 1, 10, packed(1, 10))).toBe(false);
  expect(off.stats().entries).toBe(0);

  const each = packedBytes(packed(1, 100));
  const c = new ListViewCache({ maxBytes: 10 * each });
  expect(c.userBytes).toBe(Math.floor((10 * each) / 4)); // 2.5 reads
  // A read larger than the share is not kept at all.
  expect(c.set('ann', scope('ann', 1), 1, 300, packed(1, 300))).toBe(false);
  // ann lists ten mailboxes: she keeps her two latest, within her share.
  for (let m = 1; m <= 10; m++) c.set('ann', scope('ann', m), 1, 100, packed(1, 100));
  expect(c.stats().users.get('ann')).toBe(2 * each);
  expect(c.get('ann', scope('ann', 10), 1, 100)).toBeDefined();
  expect(c.get('ann', scope('ann', 9), 1, 100)).toBeDefined();
  expect(c.get('ann', scope('ann', 8), 1, 100)).toBeUndefined();
  // Five users with two reads each: past the total (10 reads), the least recently used gives up
  // its oldest read first.
  for (const u of ['bob', 'cy', 'dee', 'eve']) {
    for (let m = 1; m <= 2; m++) c.set(u, scope(u, m), 1, 100, packed(1, 100));
  }
  expect(c.stats().bytes).toBe(10 * each);
  c.get('ann', scope('ann', 9), 1, 100); // ann used again: bob is now the least recent
  c.set('fay', scope('fay', 1), 1, 100, packed(1, 100));
  const st = c.stats();
  expect(st.bytes).toBeLessThanOrEqual(10 * each);
  expect(st.users.get('ann')).toBe(2 * each);
  expect(st.users.get('bob')).toBe(each);
  expect(c.get('bob', scope('bob', 1), 1, 100)).toBeUndefined();
  expect(c.get('bob', scope('bob', 2), 1, 100)).toBeDefined();
});

test('a read kept as its parts counts the bytes of each part, and the one entry once', () => {
  const a = packed(1, 512, 300);
  const b = packed(513, 700, 200, '\u0100');
  const both = { parts: [a, b] };
  expect(packedBytes(both)).toBe(packedBytes(a) + packedBytes(b) - ENTRY_OVERHEAD);
  const c = new ListViewCache({ maxBytes: 1 << 20 });
  expect(c.set('u', scope('u', 1), 1, 700, both)).toBe(true);
  expect(c.get('u', scope('u', 1), 1, 700)).toBe(both);
  expect(c.stats().bytes).toBe(packedBytes(both));
});
