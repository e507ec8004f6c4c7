'use strict';

/*
 * Issue 11 defect: after `import imap` refreshes flags changed upstream, the Elasticsearch
 * mirror must have them without `es reindex` — the refresh goes through the store's flag
 * change (mailbox lock, new modseq, es_outbox rows), so `es sync` (the outbox worker's
 * drain) ships them. Needs Dovecot (root) and Elasticsearch; skips with the reason outside CI.
 */

const { skipOutsideCI, dovecotMissing } = require('@mailgate/test-support/skip');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

const { withImapClient } = dovecot;
const { importImapArgs } = require('@mailgate/test-support/import-imap');
const { useCliSuite } = require('@mailgate/test-support/db');
const { describeEs } = require('@mailgate/test-support/es');
const { msg } = require('@mailgate/test-support/mail');

const FILE = 'packages/es/test/import-imap-es.test.js';
const noDovecot = skipOutsideCI(__filename, dovecotMissing());

const suite = useCliSuite('imap-es');

(noDovecot ? describe.skip : describeEs)(
  FILE,
  'import imap flag refresh reaches the ES mirror',
  (es) => {
    let inst;
    const env = () => ({
      MG_IMAP_PW: inst.password,
      MAILGATE_HOME: path.join(suite.tmp, 'home'),
      ELASTICSEARCH_URL: es.url,
      MAILGATE_ES_PREFIX: es.prefix,
    });
    const cli = (args) => suite.cli(args, { env: env() });
    const importImap = () => cli(importImapArgs(inst, 'up'));
    const search = (q, backend) =>
      cli(['search', q, '--user', 'up', '--backend', backend, '--json']).json;
    const upstream = (fn) =>
      withImapClient(inst, async (c) => {
        await c.mailboxOpen('INBOX');
        await fn(c);
      });

    beforeAll(async () => {
      if (es.skipped()) return;
      inst = await dovecot.start({ format: 'maildir' });
      for (let i = 1; i <= 4; i++) {
        await dovecot.deliver(inst.dir, msg({ subject: `upstream ${i}`, body: `body ${i}\n` }));
      }
    }, 120000);
    afterAll(async () => {
      if (inst) await inst.stop();
    });

    test('flags changed upstream are in ES after import imap + es sync, no reindex', async () => {
      if (es.skipped()) return;
      const first = importImap();
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(first.json.imported).toBe(4);
      expect(cli(['es', 'sync', '--json']).json.pending).toBe(0);
      expect(search('is:flagged', 'es').total).toBe(0);
      expect(search('is:read', 'es').total).toBe(0);

      await upstream(async (c) => {
        await c.messageFlagsAdd('2,3', ['\\Flagged'], { uid: true });
        await c.messageFlagsAdd('4', ['\\Seen', '$Label1'], { uid: true });
      });
      const again = importImap();
      expect(again.code).toBe(0);
      expect(again.json.imported).toBe(0);
      const sync = cli(['es', 'sync', '--json']);
      expect(sync.code).toBe(0);
      expect(sync.json.rows).toBeGreaterThanOrEqual(3);
      expect(sync.json.pending).toBe(0);

      const pgFlagged = search('is:flagged', 'pg');
      expect(pgFlagged.total).toBe(2);
      expect(search('is:flagged', 'es').uids).toEqual(pgFlagged.uids);
      const pgRead = search('is:read', 'pg');
      expect(pgRead.total).toBe(1);
      expect(search('is:read', 'es').uids).toEqual(pgRead.uids);
      // And es verify sees no drift: the documents carry the new flags and modseq.
      const v = cli(['es', 'verify', '--user', 'up', '--json']);
      expect(v.code).toBe(0);
      expect(v.json.ok).toBe(true);
    });
  },
);
