'use strict';

/*
 * A FETCH that fails half-way through writing its answer (here: the store hands back bytes the
 * server cannot serve) must still answer the client. The FETCH corks the socket while it writes
 * a batch; the old code left that cork in place when a message threw, so the tagged NO sat in
 * the corked socket and the client waited for ever (found when a worktree lacked a dependency
 * and `kept-at-import` hung). Against the in-memory service: the fault is injected in the
 * store's answer, the session's error path is what is under test.
 */

const { createImapServer } = require('../lib');
const { MemoryService } = require('./memory-service');
const { RawClient } = require('./raw-client');

const msg = (n) =>
  Buffer.from(
    `From: a@example.org\r\nSubject: m${n}\r\nMessage-ID: <m${n}@x>\r\n\r\nbody ${n}\r\n`,
  );

let server;
let c;

beforeAll(async () => {
  const service = new MemoryService();
  await service.addUser('alice', 'secret one');
  const be = await service.openBackend('memory', 'alice');
  for (const n of [1, 2, 3]) await be.append('INBOX', msg(n), {});
  const open = service.openBackend.bind(service);
  service.openBackend = async (kind, user) => {
    const b = await open(kind, user);
    const getRawMany = b.getRawMany.bind(b);
    // uid 2's bytes come back as something that is not bytes: serving it throws mid-answer.
    b.getRawMany = async (name, uids, opts) => {
      const out = await getRawMany(name, uids, opts);
      if (out.has(2)) out.set(2, { broken: true });
      return out;
    };
    return b;
  };
  server = createImapServer({ service, limits: { idlePollMs: 50 }, bodyCache: { maxBytes: 0 } });
  const { port } = await server.listen({ port: 0 });
  c = await RawClient.connect(port);
  await c.cmd('l', 'LOGIN alice "secret one"');
  await c.cmd('s', 'EXAMINE INBOX');
});

afterAll(async () => {
  if (c) c.close();
  if (server) await server.close();
});

test('a message that fails while the answer is written: the client gets the tagged NO, and the session goes on', async () => {
  const r = await c.cmd('f1', 'FETCH 1:3 (BODY.PEEK[])');
  expect(r).toMatch(/^f1 NO /m);
  expect(r).not.toMatch(/TypeError|broken|is not a function/); // internal text never leaks
  // The session is still usable, and the healthy message is still served.
  const ok = await c.cmd('f2', 'FETCH 1 (BODY.PEEK[])');
  expect(ok).toContain('Subject: m1');
  expect(ok).toMatch(/^f2 OK /m);
  expect(await c.cmd('n', 'NOOP')).toMatch(/^n OK /m);
});
