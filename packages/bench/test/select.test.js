'use strict';

const { selectQueries } = require('../lib/select');
const { message } = require('./fixtures');

describe('query selection by counting', () => {
  const raws = Array.from({ length: 400 }, (_, i) => message(i));
  const sel = selectQueries(raws);
  const by = Object.fromEntries([...sel.queries, ...sel.extra].map((q) => [q.request, q]));

  test('picks the ~1% and ~25% words, as substring and as word search', () => {
    expect(sel.messages).toBe(400);
    expect(by.word_rare).toMatchObject({ query: 'zebra', count: 4, fraction: 0.01 });
    expect(by.text_rare).toMatchObject({ query: 'text:zebra', count: 4, fraction: 0.01 });
    expect(by.word_common).toMatchObject({ query: 'apple', count: 100, fraction: 0.25 });
    expect(by.text_common).toMatchObject({ query: 'text:apple', count: 100 });
  });

  test('picks a ~1% sender and a ~1% day, an absent text, and always happy and free', () => {
    expect(by.from).toMatchObject({ query: 'from:rare@example.org', count: 4, fraction: 0.01 });
    expect(by.date).toMatchObject({ query: 'on:2001-06-15', count: 4 });
    expect(by.text_absent.count).toBe(0);
    for (const r of ['text_happy', 'word_happy', 'text_free', 'word_free']) {
      expect(by[r]).toBeDefined();
      expect(by[r].count).toBe(0);
    }
  });

  test('is deterministic', () => {
    expect(selectQueries(raws)).toEqual(sel);
  });
});
