'use strict';

const { WarmUpBackend, MESSAGES, NAME } = require('../lib/warm-up');

/*
 * The synthetic mailbox a new IMAP server process warms up on (issue 35.3, lib/warm-up.js):
 * its packed reads, packed by the store's own code (packImapRows) from rows shaped as the
 * store's statement answers them, give every message's own kept value, 8-bit ones included,
 * in uid order, as the pg backend's do; it names no other mailbox.
 */

test.each(['fields', 'envelope'])(
  'the packed read of %s gives each message its own value, in uid order',
  async (part) => {
    const be = new WarmUpBackend();
    const lo = 7;
    const hi = MESSAGES - 3;
    const p = await be.getImapFieldsRange(NAME, lo, hi, part);
    expect(p.uids).toHaveLength(hi - lo + 1);
    const meta = await be.getImapMeta(NAME, [lo, lo + 1, hi]);
    for (let i = 0; i < p.uids.length; i++) {
      const uid = lo + i;
      expect(p.uids[i]).toBe(uid);
      expect(p.text.slice(p.starts[i], p.ends[i])).toBe(be.metas[uid - 1][part]);
      expect(p.sizes[i]).toBe(be.metas[uid - 1].size);
    }
    expect(meta.get(lo)[part]).toBe(p.text.slice(p.starts[0], p.ends[0]));
    // A From with 8-bit bytes (in the lines and the ENVELOPE): byte lengths became characters.
    expect(/[\x80-\xff]/.test(p.text)).toBe(true);
  },
);

test('its list rows and status describe one mailbox of MESSAGES messages, and no other', async () => {
  const be = new WarmUpBackend();
  const rows = await be.scanList(NAME);
  expect(rows).toHaveLength(MESSAGES);
  expect(rows.map((r) => r.uid)).toEqual(Array.from({ length: MESSAGES }, (_, i) => i + 1));
  const st = await be.status(NAME);
  expect(st.uidnext).toBe(MESSAGES + 1);
  await expect(be.status('Other')).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
  await expect(be.getImapFieldsRange('Other', 1, 2)).rejects.toMatchObject({
    code: 'MAILBOX_NOT_FOUND',
  });
});
