'use strict';

const path = require('node:path');
const { likeEscape } = require('@mailgate/query');
const { useCliSuite } = require('@mailgate/test-support/db');
const { corpusDir } = require('@mailgate/test-support/corpus');
const { skipOutsideCI } = require('@mailgate/test-support/skip');
const { rng } = require('@mailgate/test-support/rng');
const { textOf } = require('../lib/chunks-sql');

/*
 * Substring search by the word vocabulary (migrations/20261203310100_word_vocabulary.js) on real
 * mail: the notmuch test corpora (list mail, HTML, encoded and broken headers, attachments,
 * mangled and protected headers) and three Enron users. Every answer must be what LIKE over the
 * whole lower-cased text gives, for patterns taken from the messages' own subjects, addresses,
 * header lines and bodies (runs of letters and digits, and pieces across punctuation).
 */

const NOTMUCH = [
  'attachment',
  'broken',
  'default',
  'html',
  'lkml',
  'mangling',
  'protected-headers',
];
const ENRON = ['allen-p', 'arnold-j', 'arora-h'];

describe('word vocabulary on real mail: substring answers equal LIKE', () => {
  const ctx = useCliSuite('vocabc');
  const dir = corpusDir();
  const missing = skipOutsideCI(__filename, dir ? null : '../shared/corpus is not unpacked');
  let user;

  const reference = async (field, value) => {
    const p = `%${likeEscape(value)}%`;
    const r = await ctx.db.knex.raw(
      `SELECT m.mailbox_id, m.uid FROM messages m WHERE m.user_id = ? AND NOT m.expunged
          AND (${textOf('m', 1, user.id)} LIKE ?
               ${field === 'body' ? '' : `OR ${textOf('m', 0, user.id)} LIKE ?`})`,
      [user.id, p, ...(field === 'body' ? [] : [p])],
    );
    return r.rows.map((x) => `${x.mailbox_id}/${x.uid}`).sort();
  };
  const search = async (field, value) => {
    const r = await ctx.db.store.search(user.id, { type: 'substring', field, value });
    return r.hits.map((h) => `${h.mailboxId}/${h.uid}`).sort();
  };

  beforeAll(async () => {
    if (missing) return;
    const sources = [
      ...NOTMUCH.map((d) => ['maildir', path.join(dir, 'fixtures', 'notmuch-test-corpora', d)]),
      ...ENRON.map((d) => ['mh', path.join(dir, 'enron', 'maildir', d)]),
    ];
    for (const [kind, src] of sources) {
      // Without the ES mirror (this file tests the store's search): on Citus, an import with
      // ELASTICSEARCH_URL set failed ("cannot modify table users because there was a parallel
      // operation on a distributed table"), not this test's subject.
      const r = ctx.cli(['import', kind, src, '--user', 'vc', '--json', '--quiet'], {
        env: { ELASTICSEARCH_URL: '' },
      });
      expect({ src, code: r.code, stderr: r.code ? r.stderr : '' }).toEqual({
        src,
        code: 0,
        stderr: '',
      });
    }
    user = await ctx.db.store.getUser('vc');
  });

  test('patterns from the messages themselves', async () => {
    if (missing) return;
    const rand = rng(20261128);
    const rows = (
      await ctx.db.knex.raw(
        `SELECT m.subject, m.from_text, ${textOf('m', 0, user.id)} AS h, ${textOf('m', 1, user.id)} AS b
           FROM messages m WHERE m.user_id = ? ORDER BY m.mailbox_id, m.uid`,
        [user.id],
      )
    ).rows;
    expect(rows.length).toBeGreaterThan(300);
    const pick = (arr) => arr[Math.floor(rand() * arr.length)];
    const patterns = new Set(['http', 'www', 'amp', 'nbsp', 'href', 'mailto', 'would', 'enron']);
    for (let i = 0; i < 40; i++) {
      const r = pick(rows);
      for (const t of [r.subject, r.from_text, r.h, r.b]) {
        const text = String(t || '').toLowerCase();
        const runs = text.match(/[a-z0-9]{3,}/g) || [];
        if (runs.length) {
          const w = pick(runs);
          const a = Math.floor(rand() * (w.length - 2));
          patterns.add(w.slice(a, a + 3 + Math.floor(rand() * (w.length - a - 2))));
        }
        if (text.length > 10) {
          // A stretch across punctuation or spaces.
          const a = Math.floor(rand() * (text.length - 8));
          const s = text.slice(a, a + 4 + Math.floor(rand() * 8));
          if (s.trim() && !s.includes('\u0000')) patterns.add(s);
        }
      }
    }
    for (const v of patterns) {
      for (const field of ['text', 'body']) {
        expect({ v, field, hits: await search(field, v) }).toEqual({
          v,
          field,
          hits: await reference(field, v),
        });
      }
    }
  });
});
