'use strict';

const { OPERATIONS } = require('@mailgate/service');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');

// The pg backend's write operations beyond read/flags/expunge (APPEND, COPY/MOVE, mailbox
// life cycle, subscriptions, changesSince) on a real PostgreSQL, through the service only.
describe('service: pg backend operations', () => {
  const ctx = useServiceSuite('svc');
  let service;
  let be;
  beforeAll(async () => {
    ({ service } = ctx);
    await service.users.create('carol', { password: 'pw-carol-1' });
    be = await service.openBackend('pg', 'carol');
    await be.createMailbox('INBOX');
  });

  test('pg declares every operation', () => {
    expect([...be.capabilities].sort()).toEqual([...OPERATIONS].sort());
    expect(be.kind).toBe('pg');
  });

  test('a backend opened for an authenticated {id, name} is the one opened by name', async () => {
    const u = await service.users.get('carol');
    const byUser = await service.openBackend('pg', { id: u.id, name: u.name });
    expect(await byUser.listMailboxes()).toEqual(await be.listMailboxes());
    await expect(service.openBackend('pg', 'nobody-here')).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
  });

  test('append stores the exact bytes with flags and keywords split, uids ascending', async () => {
    const raw = msg({ subject: 'Appended one', body: 'unique-append-word\n' });
    const a = await be.append('INBOX', raw, {
      flags: ['\\Seen', '$Forwarded', 'Work'],
      internalDate: '2020-01-02T03:04:05.000Z',
    });
    const b = await be.append('INBOX', raw, {}); // same bytes twice: both kept
    expect(b.uid).toBe(a.uid + 1);
    expect(a.uidvalidity).toBeGreaterThan(0);
    expect((await be.getRaw('INBOX', a.uid)).equals(raw)).toBe(true);
    const { rows, total } = await be.scan('INBOX', {});
    expect(total).toBe(2);
    expect(rows[0]).toMatchObject({
      uid: a.uid,
      subject: 'Appended one',
      flags: ['\\Seen'],
      keywords: ['$Forwarded', 'Work'],
      internalDate: '2020-01-02T03:04:05.000Z',
    });
    const s = await be.search('unique-append-word', { mailbox: 'INBOX' });
    expect(s.total).toBe(2);
    expect(s.rows.map((r) => r.mailbox)).toEqual(['INBOX', 'INBOX']);
  });

  test('scanStream and scanNdjson give the rows scan gives', async () => {
    const { rows } = await be.scan('INBOX', {});
    const streamed = [];
    for await (const r of be.scanStream('INBOX', {})) streamed.push(r);
    expect(streamed).toEqual(rows);
    let text = '';
    for await (const chunk of be.scanNdjson('INBOX', {})) text += chunk;
    const lines = text.trim().split('\n').map(JSON.parse);
    expect(lines).toEqual(rows);
  });

  test('copy and move map uids; move expunges the source; changesSince reports both', async () => {
    await be.createMailbox('Archive');
    const before = (await be.status('INBOX')).highestModseq;
    const { rows } = await be.scan('INBOX', {});
    const c = await be.copy('INBOX', [rows[0].uid], 'Archive');
    expect(c.map).toEqual([[rows[0].uid, 1]]);
    const m = await be.move('INBOX', [rows[1].uid], 'Archive');
    expect(m.map).toEqual([[rows[1].uid, 2]]);
    expect((await be.scan('INBOX', {})).rows.map((r) => r.uid)).toEqual([rows[0].uid]);
    const arch = await be.scan('Archive', {});
    expect(arch.rows.map((r) => r.subject)).toEqual(['Appended one', 'Appended one']);
    expect(arch.rows[0].keywords).toEqual(['$Forwarded', 'Work']);
    const ch = await be.changesSince('INBOX', before);
    expect(ch.expunged).toEqual([rows[1].uid]);
    expect(ch.highestModseq).toBeGreaterThan(before);
    const f = await be.setFlags('INBOX', [rows[0].uid], ['\\Flagged'], []);
    const ch2 = await be.changesSince('INBOX', ch.highestModseq);
    expect(ch2.changed).toEqual([
      {
        uid: rows[0].uid,
        flags: ['\\Flagged', '\\Seen'],
        keywords: ['$Forwarded', 'Work'],
        modseq: f.highestModseq,
      },
    ]);
    expect(ch2.expunged).toEqual([]);
  });

  test('copying a set twice into a mailbox holding the same bytes keeps every copy, its bytes and kept metadata', async () => {
    await be.createMailbox('Twice');
    const src = await be.createMailbox('Src').then(() => 'Src');
    const a = msg({ subject: 'Dup A', body: 'same bytes\n' });
    const b = msg({ subject: 'Dup B', body: 'other bytes\n' });
    for (const raw of [a, a, b, a]) await be.append(src, raw, {});
    const uids = (await be.scan(src, {})).rows.map((r) => r.uid);
    const one = await be.copy(src, uids, 'Twice');
    const two = await be.copy(src, uids, 'Twice');
    expect(one.map.map((p) => p[1])).toEqual([1, 2, 3, 4]);
    expect(two.map.map((p) => p[1])).toEqual([5, 6, 7, 8]);
    const rows = (await be.scan('Twice', {})).rows;
    expect(rows.map((r) => r.subject)).toEqual([
      ...['Dup A', 'Dup A', 'Dup B', 'Dup A'],
      ...['Dup A', 'Dup A', 'Dup B', 'Dup A'],
    ]);
    const raws = await be.getRawMany('Twice', [1, 2, 3, 4, 5, 6, 7, 8]);
    expect([...raws.values()].map((r) => r.equals(b))).toEqual([
      ...[false, false, true, false],
      ...[false, false, true, false],
    ]);
    // Kept at append, copied with the message (never derived again): each copy has its source's.
    const source = await be.getImapMeta(src, uids);
    const kept = await be.getImapMeta('Twice', [1, 2, 3, 4, 5, 6, 7, 8]);
    expect(kept.size).toBe(8);
    for (let i = 0; i < 8; i++) expect(kept.get(i + 1)).toEqual(source.get(uids[i % 4]));
    expect(kept.get(3).envelope).toContain('"Dup B"');
  });

  test('expunged uids stay reported by changesSince after the purge', async () => {
    const st = await be.status('Archive');
    await be.setFlags('Archive', [1], ['\\Deleted'], []);
    const r = await be.expunge('Archive');
    expect(r.expunged).toEqual([1]);
    await service.purger.idle();
    const ch = await be.changesSince('Archive', st.highestModseq);
    expect(ch.expunged).toEqual([1]);
    expect(ch.changed).toEqual([]);
  });

  test('mailbox life cycle and subscriptions', async () => {
    await be.createMailbox('Projects');
    await be.createMailbox('Projects/2020');
    await expect(be.createMailbox('Projects')).rejects.toMatchObject({
      code: 'MAILBOX_EXISTS',
      statusCode: 409,
    });
    await be.renameMailbox('Projects', 'Old');
    const names = (await be.listMailboxes()).map((b) => b.name);
    expect(names).toEqual(expect.arrayContaining(['Old', 'Old/2020']));
    expect(names).not.toContain('Projects');
    await be.unsubscribe('Old/2020');
    expect(await be.listSubscriptions()).not.toContain('Old/2020');
    expect(await be.listSubscriptions()).toContain('Old');
    await be.subscribe('Old/2020');
    expect(await be.listSubscriptions()).toContain('Old/2020');
    await be.deleteMailbox('Old');
    await expect(be.status('Old')).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
    await expect(be.deleteMailbox('INBOX')).rejects.toMatchObject({ statusCode: 400 });
  });

  test('queries: unknown operator and in: of a missing mailbox are coded 400s', async () => {
    await expect(be.search('foo:bar')).rejects.toMatchObject({
      code: 'INVALID_QUERY',
      statusCode: 400,
    });
    await expect(be.search('in:NoSuchBox hello')).rejects.toMatchObject({
      code: 'INVALID_QUERY',
      statusCode: 400,
    });
    await expect(be.setFlags('INBOX', 'in:Nope', ['\\Seen'], [])).rejects.toMatchObject({
      code: 'INVALID_QUERY',
    });
    // ordinary words with a colon are still words
    await expect(be.search('http://example.org Re:')).resolves.toMatchObject({ total: 0 });
  });

  test('users and tokens go through the service', async () => {
    await expect(service.users.verifyLogin('carol', 'wrong')).rejects.toMatchObject({
      code: 'INVALID_CREDENTIALS',
    });
    expect(await service.users.verifyLogin('carol', 'pw-carol-1')).toMatchObject({ name: 'carol' });
    const t = await service.users.createToken('carol');
    expect(await service.users.findToken(t.token)).toMatchObject({ user: 'carol' });
    await expect(service.openBackend('pg', 'nobody')).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
    await expect(service.openBackend('floppy', 'carol')).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});
