'use strict';

const { listUids, rowsFor, allRows, uidsAfter } = require('../lib/mail-data');

const listRows = [
  { uid: 3, flags: ['\\Seen'], keywords: [], modseq: 7, internalDate: '2020-01-01', size: 10 },
  { uid: 5, flags: [], keywords: ['$x'], modseq: 9, internalDate: '2020-01-02', size: 20 },
  { uid: 9, flags: [], keywords: [], modseq: 4, internalDate: '2020-01-03', size: 30 },
];

describe('mail-data: the rows a session reads', () => {
  test('a backend with a list view: SELECT, FETCH and SEARCH read it, never the full rows', async () => {
    const calls = [];
    const be = {
      scanList: async (mailbox) => {
        calls.push(mailbox);
        return listRows;
      },
      scan: async () => {
        throw new Error('full header rows read');
      },
    };
    expect([...(await listUids(be, 'INBOX'))]).toEqual([3, 5, 9]);
    const rows = await rowsFor(be, 'INBOX', [5, 9]);
    expect([...rows.keys()]).toEqual([5, 9]);
    expect(rows.get(5)).toBe(listRows[1]);
    expect(await allRows(be, 'Archive')).toBe(listRows);
    expect(calls).toEqual(['INBOX', 'INBOX', 'Archive']);
    // new mail after uid 3 / 4 / 9 / 0: from the list view too
    expect(await uidsAfter(be, 'INBOX', 3)).toEqual([5, 9]);
    expect(await uidsAfter(be, 'INBOX', 4)).toEqual([5, 9]);
    expect(await uidsAfter(be, 'INBOX', 9)).toEqual([]);
    expect(await uidsAfter(be, 'INBOX', 0)).toEqual([3, 5, 9]);
  });

  test('a backend without one: the header rows, following its cursor', async () => {
    const pages = {
      undefined: { rows: listRows.slice(0, 2), nextCursor: 'c1' },
      c1: { rows: listRows.slice(2), nextCursor: null },
    };
    const be = { scan: async (mailbox, opts) => pages[String(opts.cursor)] };
    expect([...(await listUids(be, 'INBOX'))]).toEqual([3, 5, 9]);
    expect([...(await rowsFor(be, 'INBOX', [3])).keys()]).toEqual([3]);
  });

  test('new mail without a list view: descending pages until a known uid', async () => {
    const desc = [...listRows].reverse();
    const pages = {
      undefined: { rows: desc.slice(0, 1), nextCursor: 'c1' },
      c1: { rows: desc.slice(1), nextCursor: null },
    };
    const be = {
      scan: async (mailbox, opts) => {
        expect(opts.order).toBe('desc');
        return pages[String(opts.cursor)];
      },
    };
    expect(await uidsAfter(be, 'INBOX', 3)).toEqual([5, 9]);
    expect(await uidsAfter(be, 'INBOX', 9)).toEqual([]);
  });
});
