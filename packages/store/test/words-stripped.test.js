'use strict';

const path = require('node:path');
const { deriveRow } = require('@mailgate/importer');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, importInbox } = require('@mailgate/test-support/mail');
const { textOf, PIECE_STEP } = require('../lib/chunks-sql');

/*
 * Issue 30.6: the stored word vectors have no positions
 * (migrations/20261203240100_words_stripped.js). Every write path stores stripped vectors, the
 * migration strips the rows stored before, and a "phrase" (every word in the vector, then the
 * words in order on the text: store/lib/words-sql.js phraseConfirm) answers what
 * phraseto_tsquery answered on the positions, on tricky texts, except the differences
 * docs/disk.md "Phrases" states, each asserted here.
 */
describe('words without positions: every write path, the migration, phrases as before', () => {
  const ctx = useCliSuite('wstrip');
  let store;
  let user;
  let inbox;

  const pad = (n) => 'lorem ipsum '.repeat(Math.ceil(n / 12)).slice(0, n);
  // The body of a message of several pieces: `at` maps byte offsets to the words put there.
  const longBody = (at, length) => {
    let t = pad(length);
    for (const [off, s] of Object.entries(at)) {
      t = t.slice(0, Number(off)) + s + t.slice(Number(off) + s.length);
    }
    return `${t}\n`;
  };
  const cut = PIECE_STEP; // piece 1 starts here (ASCII text: no character boundary to move to)

  // Each fixture: name → message. The phrases below are looked up in all of them.
  const FIXTURES = {
    plain: msg({ subject: 'one', body: 'we would like alpha beta today\n' }),
    punct: msg({
      subject: 'two',
      body: 'alpha, beta; gamma -- delta...epsilon (zeta) "eta" theta\n',
    }),
    lines: msg({ subject: 'three', body: 'alpha\nbeta\r\n\r\n\tgamma\n> > delta\n' }),
    repeated: msg({ subject: 'four', body: 'kappa kappa kappa lambda lambda mu\n' }),
    reversed: msg({ subject: 'five', body: 'beta alpha; delta gamma\n' }),
    // the subject's last word runs on into the From text (one vector, as before)
    subject: msg({ subject: 'quarterly Report', from: 'Ann Lee <ann@example.org>', body: 'x\n' }),
    // the last address word and the body's first: the stated difference
    seam: msg({ subject: 'seam', to: 'Bob <bob@seam.example>', cc: null, body: 'yankee zulu\n' }),
    // 8-bit without a charset, and upper-case non-ASCII in the subject
    eight: Buffer.concat([
      Buffer.from('From: a@example.org\nTo: b@example.org\nSubject: CAFÉ CRÈME\n\n', 'utf8'),
      Buffer.from('un caf\xe9 cr\xe8me br\xfbl\xe9e, merci\n', 'latin1'),
    ]),
    // words inside one token of the parser: an address, a path, a host, a version
    tokens: msg({
      subject: 'tokens',
      body: 'mail linux-kernel@vger.kernel.org or see include/linux/kernel.h at kernel.org v1.0\nlinux, and the kernel\n',
    }),
    hyphen: msg({ subject: 'hyphen', body: 'a well-known fact and e-mail me\n' }),
    // the phrase's first word glued into a host just before an occurrence glued to it by
    // punctuation (the host's occurrence is no phrase, the next one is), the true one first,
    // and occurrences that overlap
    glued1: msg({ subject: 'glued1', body: 'see www.new york,new york city\n' }),
    glued2: msg({ subject: 'glued2', body: 'x.foo bar,foo bar\n' }),
    glued3: msg({ subject: 'glued3', body: 'a.in the,in the end\n' }),
    glued4: msg({ subject: 'glued4', body: 'quebec romeo,x.quebec romeo\n' }),
    glued5: msg({ subject: 'glued5', body: 'x.hotel hotel hotel\n' }),
    glued6: msg({ subject: 'glued6', body: 'x.golf lima.golf lima\n' }),
    // a phrase across piece 0's end (whole in piece 1, which starts 250 bytes before it ends),
    // one across the cut at 2 × PIECE_STEP (whole in piece 1), and a cut through a word: piece 1
    // starts with "omega psi" where the text has "zomega psi" ("omega" and "psi" are elsewhere)
    boundary: msg({
      subject: 'boundary',
      body: longBody(
        {
          0: 'omega lorem psi ',
          [cut - 2]: ' zomega psi ',
          [cut + 245]: ' upsilon phi ',
          [2 * cut - 5]: ' sigma tau ',
        },
        2 * cut + 500,
      ),
    }),
    // what the parser skips without a position: a tag between two words (a stated difference)
    tag: msg({ subject: 'tag', body: 'sierra <b>tango</b> uniform\n' }),
    // a word's occurrences past its 256th have no position (a stated difference)
    many: msg({ subject: 'many', body: `${'zulu '.repeat(300)}yankee\n` }),
    // separators: a long run inside one piece, and one across the cut (the stated difference)
    runs: msg({
      subject: 'runs',
      body: longBody(
        { 100: ` nu${' '.repeat(300)}xi `, [cut - 100]: ` pi${' \n'.repeat(200)}omicron ` },
        cut + 1000,
      ),
    }),
  };
  const PHRASES = [
    'alpha beta',
    'would like',
    'like alpha',
    'alpha beta gamma delta',
    'delta epsilon',
    'zeta eta theta',
    'gamma delta',
    'beta gamma',
    'kappa lambda',
    'kappa kappa lambda',
    'lambda kappa',
    'lambda mu',
    'beta alpha',
    'quarterly report',
    'report ann',
    'report ann lee',
    'bob yankee',
    'yankee zulu',
    'café crème',
    'CAFÉ CRÈME',
    'crème brûlée',
    'linux kernel',
    'kernel org',
    'linux kernel h',
    'linux and',
    'linux-kernel@vger.kernel.org or',
    'v1 0',
    'well known',
    'known fact',
    'well-known fact',
    'e mail me',
    'e-mail me',
    'sigma tau',
    'upsilon phi',
    'omega psi',
    'nu xi',
    'lorem ipsum lorem',
    'ipsum ipsum',
    'new york',
    'new york city',
    'foo bar',
    'in the',
    'in the end',
    'quebec romeo',
    'hotel hotel',
    'golf lima',
  ];
  // The differences docs/disk.md "Phrases" states: the answer before (positions) and now.
  const DIFFERENT = {
    'bob@seam.example yankee': { before: ['seam'], now: [] },
    'pi omicron': { before: ['runs'], now: [] },
    'sierra tango': { before: ['tag'], now: [] },
    'zulu yankee': { before: [], now: ['many'] },
  };
  const uidOf = {};
  const nameOf = {};

  const rowOf = (raw) => deriveRow(raw).row;
  // Rows whose vector still holds positions (strip() changes it), and all rows.
  const positioned = async () =>
    (
      await ctx.db.knex.raw(
        `SELECT count(*) FILTER (WHERE tsv <> strip(tsv))::int AS positioned, count(*)::int AS rows
           FROM message_words WHERE user_id = ?`,
        [user.id],
      )
    ).rows[0];
  const search = async (q, mailbox = 'INBOX') =>
    (await store.search(user.id, `"${q}"`, { mailbox: { name: mailbox } })).hits
      .map((h) => nameOf[h.uid])
      .sort();
  // The answer of phraseto_tsquery on the message's positioned vector, computed again from its
  // text as the insert trigger computes it: what the stored positions answered.
  const before = async (q) =>
    (
      await ctx.db.knex.raw(
        `SELECT m.uid FROM messages m WHERE m.user_id = ? AND m.mailbox_id = ? AND
            mailgate_words(m.subject, m.from_text || ' ' || m.to_text || ' ' || m.cc_text,
              ${textOf('m', 1, user.id)}) @@ phraseto_tsquery('simple', ?)`,
        [user.id, inbox.id, q],
      )
    ).rows
      .map((r) => nameOf[r.uid])
      .sort();

  beforeAll(async () => {
    store = ctx.db.store;
    const names = Object.keys(FIXTURES);
    ({ user, inbox } = await importInbox(
      store,
      path.join(ctx.tmp, 'w.mbox'),
      names.map((n) => FIXTURES[n]),
      'wstrip',
    ));
    const uids = (
      await ctx.db.knex.raw('SELECT uid FROM messages WHERE user_id = ? ORDER BY uid', [user.id])
    ).rows.map((r) => Number(r.uid));
    names.forEach((n, i) => {
      uidOf[n] = uids[i];
      nameOf[uids[i]] = n;
    });
  });

  test('the fixtures are what they say: pieces cut where the boundary cases need them', async () => {
    const pieces = (
      await ctx.db.knex.raw(
        'SELECT seq, t FROM message_chunks WHERE user_id = ? AND uid = ? AND kind = 1 ORDER BY seq',
        [user.id, uidOf.boundary],
      )
    ).rows;
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces[1].t.startsWith('omega psi ')).toBe(true);
    expect(pieces[0].t).toContain('zomega psi');
    expect(pieces[0].t).not.toContain('upsilon phi');
    expect(pieces[1].t).toContain('upsilon phi');
    expect(pieces[1].t).toContain('sigma tau');
    expect(pieces[2].t).not.toContain('sigma tau');
  });

  test('import stores vectors without positions; words and phrases answer as before', async () => {
    expect(await positioned()).toEqual({ positioned: 0, rows: Object.keys(FIXTURES).length });
    for (const q of PHRASES) {
      expect({ q, now: await search(q) }).toEqual({ q, now: await before(q) });
    }
    for (const [q, { before: b, now }] of Object.entries(DIFFERENT)) {
      expect({ q, before: await before(q), now: await search(q) }).toEqual({ q, before: b, now });
    }
    // Not vacuous: the answers the cases are about.
    const expected = {
      'alpha beta': ['lines', 'plain', 'punct'],
      'beta alpha': ['reversed'],
      'kappa kappa lambda': ['repeated'],
      'report ann': ['subject'],
      'café crème': ['eight'],
      'CAFÉ CRÈME': ['eight'],
      'linux kernel': [],
      'linux and': ['tokens'],
      'well known': ['hyphen'],
      'e-mail me': ['hyphen'],
      'sigma tau': ['boundary'],
      'upsilon phi': ['boundary'],
      'omega psi': [],
      'nu xi': ['runs'],
      'new york': ['glued1'],
      'foo bar': ['glued2'],
      'in the': ['glued3'],
      'quebec romeo': ['glued4'],
      'hotel hotel': ['glued5'],
      'golf lima': [],
    };
    for (const [q, hits] of Object.entries(expected)) {
      expect({ q, hits: await search(q) }).toEqual({ q, hits });
    }
    // Single words and word lists never needed positions.
    expect(await search('zomega')).toEqual(['boundary']);
    const words = await store.search(user.id, 'alpha beta', { mailbox: { name: 'INBOX' } });
    expect(words.hits.map((h) => nameOf[h.uid]).sort()).toEqual([
      'lines',
      'plain',
      'punct',
      'reversed',
    ]);
  });

  test('under OR and NOT, and across mailboxes (the set forms of the term)', async () => {
    const all = async (q) =>
      (await store.search(user.id, q)).hits
        .filter((h) => h.mailboxId === inbox.id)
        .map((h) => nameOf[h.uid])
        .sort();
    expect(await all('"alpha beta"')).toEqual(['lines', 'plain', 'punct']);
    expect(await all('"beta alpha" OR "upsilon phi"')).toEqual(['boundary', 'reversed']);
    const not = await all('-"alpha beta"');
    expect(not).toContain('reversed');
    expect(not).not.toContain('plain');
    expect(not).toHaveLength(Object.keys(FIXTURES).length - 3);
  });

  test('append, deliver, copy and move store vectors without positions', async () => {
    const archive = await store.createMailbox(user.id, 'Archive');
    const raw = msg({ subject: 'appended', body: 'rho sigma tau\n' });
    const a = await store.appendMessage(user.id, inbox.id, { raw, row: rowOf(raw) });
    nameOf[a.uid] = 'appended';
    // `mailgate deliver` (what the LMTP server calls too): the service's append
    const d = ctx.cli(['deliver', '-a', 'wstrip@example.org', '--json'], {
      input: 'From: x@example.org\nSubject: delivered\n\nphi chi psi\n',
    });
    expect(d.code).toBe(0);
    nameOf[JSON.parse(d.stdout).uid] = 'delivered';
    await store.copyMessages(user.id, inbox.id, [uidOf.plain], archive.id);
    await store.copyMessages(user.id, inbox.id, [uidOf.punct], archive.id, { move: true });
    const n = Object.keys(FIXTURES).length;
    // appended, delivered, the copy, the moved message (its source row stays until the purge)
    expect(await positioned()).toEqual({ positioned: 0, rows: n + 4 });
    expect(await search('sigma tau')).toEqual(['appended', 'boundary']);
    expect(await search('chi psi')).toEqual(['delivered']);
    const inArchive = (
      await store.search(user.id, '"alpha beta"', { mailbox: { name: 'Archive' } })
    ).hits.length;
    expect(inArchive).toBe(2);
  });

  test('the migration strips the vectors stored before, and the way down restores them', async () => {
    const k = ctx.db.knex;
    const name = { name: '20261203240100_words_stripped.js' };
    const vectors = async () =>
      Object.fromEntries(
        (
          await k.raw(
            'SELECT mailbox_id, uid, tsv::text AS v FROM message_words WHERE user_id = ?',
            [user.id],
          )
        ).rows.map((r) => [`${r.mailbox_id}/${r.uid}`, r.v]),
      );
    const now = await vectors();
    // The vocabulary's migrations, which build on this one, down first and up again last.
    const vocab = [
      { name: '20261203310200_vocab_text_only.js' },
      { name: '20261203310100_word_vocabulary.js' },
    ];
    for (const m of vocab) await k.migrate.down(m);
    await k.migrate.down(name);
    // The way down puts the positions back, computed from the text.
    const restored = await vectors();
    expect((await positioned()).positioned).toBe(Object.keys(restored).length);
    const stored = await k.raw(
      `SELECT uid FROM message_words WHERE user_id = ? AND mailbox_id = ?
          AND tsv @@ phraseto_tsquery('simple', 'alpha beta') ORDER BY uid`,
      [user.id, inbox.id],
    );
    // (punct's row in INBOX is hidden by the move, not purged yet: it keeps its words)
    expect(stored.rows.map((r) => nameOf[r.uid]).sort()).toEqual(['lines', 'plain', 'punct']);
    // The code before stores positions: a message stored now has them too.
    const raw = msg({ subject: 'old code', body: 'alpha beta\n' });
    const a = await store.appendMessage(user.id, inbox.id, { raw, row: rowOf(raw) });
    nameOf[a.uid] = 'oldcode';
    expect((await positioned()).positioned).toBe(Object.keys(restored).length + 1);
    await k.migrate.up(name);
    for (const m of [...vocab].reverse()) await k.migrate.up(m);
    expect(await positioned()).toEqual({ positioned: 0, rows: Object.keys(now).length + 1 });
    const after = await vectors();
    for (const [uid, v] of Object.entries(now)) expect({ uid, v: after[uid] }).toEqual({ uid, v });
    expect(await search('alpha beta')).toEqual(['lines', 'oldcode', 'plain']);
  });
});
