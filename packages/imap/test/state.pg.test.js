'use strict';

/*
 * Issue 28, the IMAP server's state kept in the store: UIDVALIDITY that never repeats (and
 * caches that cannot serve another mailbox's data), \Recent, keywords in FLAGS, MOVE into the
 * selected mailbox, subscriptions, sequence numbers past the end, CHANGEDSINCE, and new mail
 * pushed to IDLE through PostgreSQL LISTEN/NOTIFY. On the real store through @mailgate/service,
 * over the raw wire.
 */

const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let env;
const PW = { carol: 'carol pw 1' };

/** A raw client logged in as carol. */
async function login() {
  const c = await RawClient.connect(env.port);
  const r = await c.cmd('l', `LOGIN carol "${PW.carol}"`);
  expect(r).toMatch(/^l OK/m);
  return c;
}

/** `APPEND mailbox {n+}` with the message as a non-synchronising literal. */
function appendCmd(mailbox, raw, flags = '') {
  return `APPEND ${mailbox}${flags ? ` (${flags})` : ''} {${raw.length}+}\r\n${raw.toString('latin1')}`;
}

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  const be = await env.service.openBackend('pg', 'carol');
  await be.createMailbox('INBOX');
  await be.close();
});

afterAll(async () => {
  if (env) await env.close();
});

test('DELETE, CREATE and APPEND within one second: a new UIDVALIDITY, and FETCH serves the new message', async () => {
  const old = msg({ from: 'old@example.org', subject: 'the deleted one' });
  const fresh = msg({ from: 'new@example.org', subject: 'the new one' });
  const c = await login();
  expect(await c.cmd('a', 'CREATE Reuse')).toMatch(/^a OK/m);
  const a1 = await c.cmd('b', appendCmd('Reuse', old));
  const v1 = Number(/APPENDUID (\d+) 1\]/.exec(a1)[1]);
  await c.cmd('c', 'SELECT Reuse');
  const f1 = await c.cmd('d', 'FETCH 1 (ENVELOPE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT)])');
  expect(f1).toContain('the deleted one');
  await c.cmd('e', 'SELECT INBOX');
  // The clock stands still: the old scheme (seconds since the epoch) repeated the value here.
  const now = Date.now();
  const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
  try {
    expect(await c.cmd('f', 'DELETE Reuse')).toMatch(/^f OK/m);
    expect(await c.cmd('g', 'CREATE Reuse')).toMatch(/^g OK/m);
    const a2 = await c.cmd('h', appendCmd('Reuse', fresh));
    const v2 = Number(/APPENDUID (\d+) 1\]/.exec(a2)[1]);
    // RFC 3501 2.3.1.1: strictly greater for a re-created name.
    expect(v2).toBeGreaterThan(v1);
    const sel = await c.cmd('i', 'SELECT Reuse');
    expect(sel).toContain(`[UIDVALIDITY ${v2}]`);
  } finally {
    clock.mockRestore();
  }
  const f2 = await c.cmd('j', 'FETCH 1 (ENVELOPE BODY.PEEK[HEADER.FIELDS (FROM SUBJECT)])');
  expect(f2).toContain('the new one');
  expect(f2).toContain('new@example.org');
  expect(f2).not.toContain('the deleted one');
  expect(f2).not.toContain('old@example.org');
  const f3 = await c.cmd('k', 'FETCH 1 (BODYSTRUCTURE BODY.PEEK[HEADER])');
  expect(f3).toContain('the new one');
  c.close();
});

test('RENAME: a name reached again never repeats a UIDVALIDITY it had', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE R1');
  const s1 = await c.cmd('b', 'STATUS R1 (UIDVALIDITY)');
  const v1 = Number(/UIDVALIDITY (\d+)/.exec(s1)[1]);
  await c.cmd('c', 'RENAME R1 R2');
  await c.cmd('d', 'CREATE R1');
  const s2 = await c.cmd('e', 'STATUS R1 (UIDVALIDITY)');
  const s3 = await c.cmd('f', 'STATUS R2 (UIDVALIDITY)');
  expect(Number(/UIDVALIDITY (\d+)/.exec(s3)[1])).toBe(v1); // RENAME keeps it
  expect(Number(/UIDVALIDITY (\d+)/.exec(s2)[1])).toBeGreaterThan(v1);
  c.close();
});

test('FETCH and STORE of a sequence number past the last message answer BAD', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE Short');
  await c.cmd('b', appendCmd('Short', msg({ subject: 'only one' })));
  await c.cmd('c', 'SELECT Short');
  expect(await c.cmd('d', 'FETCH 2 (FLAGS)')).toMatch(/^d BAD/m);
  expect(await c.cmd('e', 'FETCH 1:5 (FLAGS)')).toMatch(/^e BAD/m);
  expect(await c.cmd('f', 'STORE 7 +FLAGS (\\Seen)')).toMatch(/^f BAD/m);
  expect(await c.cmd('f2', 'COPY 3 INBOX')).toMatch(/^f2 BAD/m);
  // `*` is the last message, and UID sets name no sequence numbers.
  expect(await c.cmd('g', 'FETCH 1:* (FLAGS)')).toMatch(/^\* 1 FETCH[^]*^g OK/m);
  expect(await c.cmd('h', 'UID FETCH 1:99 (FLAGS)')).toMatch(/^h OK/m);
  const st = await c.cmd('i', 'FETCH 1 (FLAGS)');
  expect(st).not.toMatch(/Seen/);
  c.close();
});

test('FETCH CHANGEDSINCE sends each changed message once', async () => {
  const c = await login();
  const other = await login();
  await c.cmd('a', 'CREATE Changes');
  for (const s of ['one', 'two', 'three']) {
    await c.cmd('b', appendCmd('Changes', msg({ subject: s })));
  }
  const sel = await c.cmd('c', 'SELECT Changes (CONDSTORE)');
  const modseq = Number(/HIGHESTMODSEQ (\d+)/.exec(sel)[1]);
  await other.cmd('d', 'SELECT Changes');
  await other.cmd('e', 'STORE 2 +FLAGS.SILENT (\\Flagged)');
  const r = await c.cmd('f', `FETCH 1:* (FLAGS) (CHANGEDSINCE ${modseq})`);
  expect(r.match(/^\* 2 FETCH/gm)).toHaveLength(1);
  expect(r).toMatch(/^\* 2 FETCH \([^\r\n]*\\Flagged/m);
  expect(r).not.toMatch(/^\* [13] FETCH/m);
  c.close();
  other.close();
});

test('MOVE into the selected mailbox: COPYUID, EXPUNGE, then EXISTS for the new copy', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE Self');
  await c.cmd('b', appendCmd('Self', msg({ subject: 'first' })));
  await c.cmd('c', appendCmd('Self', msg({ subject: 'second' })));
  const sel = await c.cmd('d', 'SELECT Self');
  const validity = /UIDVALIDITY (\d+)/.exec(sel)[1];
  const r = await c.cmd('e', 'UID MOVE 1 Self');
  expect(r).toMatch(new RegExp(`^\\* OK \\[COPYUID ${validity} 1 3\\]`, 'm'));
  const expunge = r.search(/^\* 1 EXPUNGE/m);
  const exists = r.search(/^\* 2 EXISTS/m);
  expect(expunge).toBeGreaterThan(-1);
  expect(exists).toBeGreaterThan(expunge);
  expect(r).toMatch(/^e OK/m);
  const f = await c.cmd('f', 'FETCH 1:* (UID BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
  expect(f).toMatch(/^\* 1 FETCH \(UID 2 /m);
  expect(f).toMatch(/^\* 2 FETCH \(UID 3 [^]*first/m);
  // The plain MOVE form too.
  const m2 = await c.cmd('g', 'MOVE 1 Self');
  expect(m2).toMatch(/^\* OK \[COPYUID \d+ 2 4\][^]*^\* 1 EXPUNGE[^]*^\* 2 EXISTS/m);
  c.close();
});

test('\\Recent: the first SELECT after APPEND claims it; another session and EXAMINE do not take it', async () => {
  const c = await login();
  const other = await login();
  await c.cmd('a', 'CREATE Fresh');
  await c.cmd('b', appendCmd('Fresh', msg({ subject: 'r1' })));
  await c.cmd('c', appendCmd('Fresh', msg({ subject: 'r2' }), '\\Seen'));
  // STATUS counts what no session claimed yet; EXAMINE sees it recent without claiming it.
  expect(await c.cmd('d', 'STATUS Fresh (RECENT)')).toMatch(/RECENT 2\)/);
  const ex = await other.cmd('e', 'EXAMINE Fresh');
  expect(ex).toMatch(/^\* 2 RECENT/m);
  const sel = await c.cmd('f', 'SELECT Fresh');
  expect(sel).toMatch(/^\* 2 RECENT/m);
  expect(await c.cmd('g', 'SEARCH RECENT')).toMatch(/^\* SEARCH 1 2\r\n/m);
  expect(await c.cmd('h', 'SEARCH NEW')).toMatch(/^\* SEARCH 1\r\n/m);
  expect(await c.cmd('i', 'SEARCH OLD')).toMatch(/^\* SEARCH\r\n/m);
  expect(await c.cmd('j', 'FETCH 1 (FLAGS)')).toMatch(/^\* 1 FETCH \(FLAGS \(\\Recent\)\)/m);
  // Claimed: a second SELECT (this process or another) sees nothing recent.
  const again = await other.cmd('k', 'SELECT Fresh');
  expect(again).toMatch(/^\* 0 RECENT/m);
  expect(await other.cmd('l', 'SEARCH OLD')).toMatch(/^\* SEARCH 1 2\r\n/m);
  expect(await other.cmd('m', 'FETCH 1 (FLAGS)')).not.toMatch(/Recent/);
  expect(await c.cmd('n', 'STATUS INBOX (RECENT)')).toMatch(/RECENT 0\)/);
  // New mail while selected: the first session to learn of it has it recent, the other not.
  // (Delivered through the service, as the API or LMTP would: a session that APPENDs to its
  // own selected mailbox learns of the message first and claims it.)
  const be = await env.service.openBackend('pg', 'carol');
  await be.append('Fresh', msg({ subject: 'r3' }), {});
  await be.close();
  const noop = await c.cmd('p', 'NOOP');
  expect(noop).toMatch(/^\* 3 EXISTS\r\n\* 3 RECENT/m);
  const noop2 = await other.cmd('q', 'NOOP');
  expect(noop2).toMatch(/^\* 3 EXISTS\r\n\* 0 RECENT/m);
  expect(await c.cmd('r', 'SEARCH RECENT')).toMatch(/^\* SEARCH 1 2 3\r\n/m);
  c.close();
  other.close();
});

test('\\Recent: COPY into a mailbox makes the copies recent for its next SELECT', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE CopySrc');
  await c.cmd('b', 'CREATE CopyDst');
  await c.cmd('c', appendCmd('CopySrc', msg({ subject: 'to copy' })));
  await c.cmd('d', 'SELECT CopyDst');
  await c.cmd('e', 'SELECT CopySrc');
  expect(await c.cmd('f', 'COPY 1 CopyDst')).toMatch(/^f OK/m);
  expect(await c.cmd('g', 'SELECT CopyDst')).toMatch(/^\* 1 RECENT/m);
  c.close();
});

test('FLAGS lists the keywords in use; STORE and APPEND of a new keyword send a new FLAGS', async () => {
  const c = await login();
  const other = await login();
  await c.cmd('a', 'CREATE Kw');
  await c.cmd('b', appendCmd('Kw', msg({ subject: 'k1' }), '$Label1 custom_kw'));
  await c.cmd('c', appendCmd('Kw', msg({ subject: 'k2' }), '$Forwarded'));
  const sel = await c.cmd('d', 'SELECT Kw');
  const flags = /^\* FLAGS \(([^)]*)\)/m.exec(sel)[1].split(' ');
  expect(flags).toEqual(expect.arrayContaining(['\\Seen', '$Label1', 'custom_kw', '$Forwarded']));
  const perm = /PERMANENTFLAGS \(([^)]*)\)/.exec(sel)[1].split(' ');
  expect(perm).toEqual(expect.arrayContaining(['\\*', '$Label1', '\\Deleted']));
  // STORE of a keyword no message had: FLAGS with it, before the FETCH that carries it.
  const st = await c.cmd('e', 'STORE 2 +FLAGS (NewKeyword)');
  const fl = st.search(/^\* FLAGS \([^)]*NewKeyword/m);
  expect(fl).toBeGreaterThan(-1);
  expect(st.search(/^\* 2 FETCH \(FLAGS \([^)]*NewKeyword/m)).toBeGreaterThan(fl);
  // A keyword already listed is not announced again.
  expect(await c.cmd('f', 'STORE 1 +FLAGS ($Forwarded)')).not.toMatch(/^\* FLAGS/m);
  // APPEND by another session with a new keyword: FLAGS comes with the new message.
  await other.cmd('g', appendCmd('Kw', msg({ subject: 'k3' }), 'Later_Kw'));
  const noop = await c.cmd('h', 'NOOP');
  expect(noop).toMatch(/^\* FLAGS \([^)]*Later_Kw/m);
  expect(noop).toMatch(/^\* 3 EXISTS/m);
  c.close();
  other.close();
});

test('subscriptions: CREATE does not subscribe; LSUB % shows unsubscribed parents \\Noselect; UNSUBSCRIBE of a deleted mailbox', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE Subs');
  await c.cmd('b', 'CREATE Subs/Mid');
  await c.cmd('c', 'CREATE Subs/Mid/Leaf');
  expect(await c.cmd('d', 'LSUB "" Subs*')).not.toMatch(/^\* LSUB/m);
  expect(await c.cmd('e', 'SUBSCRIBE Subs/Mid/Leaf')).toMatch(/^e OK/m);
  // RFC 3501 6.3.9: `%` stops at a parent that is not subscribed; it is listed \Noselect.
  const pct = await c.cmd('f', 'LSUB "" Subs/%');
  expect(pct).toMatch(/^\* LSUB \([^)]*\\Noselect[^)]*\) "\/" "?Subs\/Mid"?\r\n/m);
  expect(pct).not.toMatch(/Leaf/);
  const top = await c.cmd('g', 'LSUB "" %');
  expect(top).toMatch(/^\* LSUB \([^)]*\\Noselect[^)]*\) "\/" "?Subs"?\r\n/m);
  // `*` reaches the subscribed name itself: no unsubscribed parent is listed.
  const star = await c.cmd('h', 'LSUB "" Subs*');
  expect(star).toMatch(/^\* LSUB \([^)]*\) "\/" "?Subs\/Mid\/Leaf"?\r\n/m);
  expect(star).not.toMatch(/"\/" "?Subs"?\r\n/);
  expect(star).not.toMatch(/"\/" "?Subs\/Mid"?\r\n/);
  // A subscribed mailbox deleted: UNSUBSCRIBE still succeeds (and so does one never subscribed).
  await c.cmd('i', 'DELETE Subs/Mid/Leaf');
  expect(await c.cmd('j', 'UNSUBSCRIBE Subs/Mid/Leaf')).toMatch(/^j OK/m);
  expect(await c.cmd('k', 'UNSUBSCRIBE Never/Was')).toMatch(/^k OK/m);
  c.close();
});

test('subscriptions survive DELETE (RFC 3501 6.3.6): LSUB and LIST (SUBSCRIBED) keep the name, CREATE finds it subscribed', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE Kept');
  expect(await c.cmd('b', 'SUBSCRIBE Kept')).toMatch(/^b OK/m);
  expect(await c.cmd('c', 'DELETE Kept')).toMatch(/^c OK/m);
  // The server must not remove the name from the subscription list by itself.
  expect(await c.cmd('d', 'LSUB "" Kept')).toMatch(/^\* LSUB \([^)]*\) "\/" "?Kept"?\r\n/m);
  const sub = await c.cmd('e', 'LIST (SUBSCRIBED) "" Kept');
  expect(sub).toMatch(/^\* LIST \([^)]*\\NonExistent[^)]*\) "\/" "?Kept"?\r\n/m);
  expect(sub).toMatch(/^\* LIST \([^)]*\\Subscribed[^)]*\) "\/" "?Kept"?\r\n/m);
  // A plain LIST lists mailboxes only.
  expect(await c.cmd('f', 'LIST "" Kept')).not.toMatch(/^\* LIST/m);
  // Created again, even by CREATE (which does not subscribe), the name is still subscribed.
  await c.cmd('g', 'CREATE Kept');
  const again = await c.cmd('h', 'LIST (SUBSCRIBED) "" Kept');
  expect(again).toMatch(/^\* LIST \([^)]*\\Subscribed[^)]*\) "\/" "?Kept"?\r\n/m);
  expect(again).not.toMatch(/NonExistent/);
  // UNSUBSCRIBE ends it, mailbox or not.
  await c.cmd('i', 'DELETE Kept');
  expect(await c.cmd('j', 'UNSUBSCRIBE Kept')).toMatch(/^j OK/m);
  expect(await c.cmd('k', 'LSUB "" Kept')).not.toMatch(/^\* LSUB/m);
  // SUBSCRIBE still wants a mailbox that exists.
  expect(await c.cmd('l', 'SUBSCRIBE Kept')).toMatch(/^l NO/m);
  c.close();
});

test('RENAME carries the subscriptions of the mailbox and its inferiors', async () => {
  const c = await login();
  await c.cmd('a', 'CREATE Trip');
  await c.cmd('b', 'CREATE Trip/Photos');
  await c.cmd('c', 'SUBSCRIBE Trip/Photos');
  expect(await c.cmd('d', 'RENAME Trip Travel')).toMatch(/^d OK/m);
  const lsub = await c.cmd('e', 'LSUB "" *');
  expect(lsub).toMatch(/"\/" "?Travel\/Photos"?\r\n/);
  expect(lsub).not.toMatch(/Trip/);
  c.close();
});

test('DELETE leaves no thread key, snapshot or row naming the deleted mailbox', async () => {
  const knex = env.db.knex;
  const c = await login();
  await c.cmd('a', 'CREATE Threads');
  const m = msg({ subject: 'threaded', headers: ['Message-ID: <t1@example.org>'] });
  await c.cmd('b', appendCmd('Threads', m));
  await c.cmd('c', 'SELECT Threads');
  await c.cmd('d', 'FETCH 1 (FLAGS)');
  await c.cmd('e', 'UNSELECT');
  const { id } = await knex('mailboxes').where({ name: 'Threads' }).first('id');
  const count = async (table) =>
    Number((await knex(table).where({ mailbox_id: id }).count('* as n'))[0].n);
  expect(await count('thread_keys')).toBeGreaterThan(0);
  expect(await c.cmd('f', 'DELETE Threads')).toMatch(/^f OK/m);
  await env.service.store.settleBackground();
  for (const table of ['thread_keys', 'messages', 'list_snapshots', 'message_sources']) {
    expect([table, await count(table)]).toEqual([table, 0]);
  }
  c.close();
});
