'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const { runDeliverBench, deliverMarkdown, messageIds } = require('../lib/deliver-run');
const { syntheticCorpus } = require('./fixtures');

/*
 * `npm run bench:deliver` run tiny (a 200-message INBOX, 50 deliveries per phase after a warm-up of 20, 1 and 2
 * sessions) against the real servers: mailgate's `serve` on an embedded PostgreSQL, Dovecot's
 * LMTP and IMAP on Maildir and mbox, Postfix's smtp-source. Asserts the result's shape and that
 * every server received every message of every phase exactly once; never its figures.
 */
const missing =
  dovecotMissing() ||
  (fs.existsSync('/usr/lib/dovecot/lmtp') ? null : 'dovecot-lmtpd is not installed') ||
  (fs.existsSync('/usr/sbin/smtp-source') ? null : 'postfix (smtp-source) is not installed');
const skip = skipOutsideCI(__filename, missing);

(skip ? describe.skip : describe)('bench deliver, tiny', () => {
  let work;
  let corpus;
  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-deliver-'));
    corpus = syntheticCorpus(270);
  });
  afterAll(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
    if (corpus) fs.rmSync(corpus.dir, { recursive: true, force: true });
  });

  test('every server gets every message of every phase exactly once; targets are computed', async () => {
    const doc = await runDeliverBench({
      corpus: corpus.dir,
      work,
      messages: 200,
      deliveries: 50,
      sessions: [1, 2],
      warmup: 20,
    });
    expect(doc.kind).toBe('deliver');
    expect(doc.machine.load.start).toHaveLength(3);
    // 3 servers × (lmtp 1, lmtp 2, lmtp-latency 1, lmtp-latency 2, imap-append 1).
    expect(doc.results).toHaveLength(15);
    expect(doc.warmup).toBe(20);
    for (const r of doc.results) {
      expect(r).toMatchObject({ messages: 50, arrived: 50, exactlyOnce: true, warmup: 20 });
      expect(r.perSecond).toBeGreaterThan(0);
      expect(r.cpuMsPerMessage).toBeGreaterThanOrEqual(0);
      if (r.phase !== 'lmtp') expect(r.p99).toBeGreaterThanOrEqual(r.p50);
    }
    const before = (server, phase, sessions) =>
      doc.results.find((r) => r.server === server && r.phase === phase && r.sessions === sessions)
        .mailboxBefore;
    // Every server starts from the same INBOX and grows the same way: each timed phase comes
    // after a warm-up of 20 messages of its kind on that server.
    for (const s of ['mailgate', 'dovecot-maildir', 'dovecot-mbox']) {
      expect(before(s, 'lmtp', 1)).toBe(220);
      expect(before(s, 'lmtp', 2)).toBe(290);
      expect(before(s, 'imap-append', 1)).toBe(500);
    }
    expect(doc.targets.map((t) => typeof t.met)).not.toContain('undefined');
    expect(doc.targets).toHaveLength(7);
    const md = deliverMarkdown(doc, 'npm run bench:deliver -- --messages 200');
    expect(md).toMatch(/\| imap-append \| 1 \| dovecot-mbox \| 500 \|/);
  });

  test('Message-IDs are read from the header only', () => {
    const a = Buffer.from('Subject: x\nMessage-ID: <A@x>\n\nMessage-ID: <b@x>\n');
    expect(messageIds([a, Buffer.from('Subject: none\n\nbody\n')])).toEqual(['<a@x>']);
  });
});
