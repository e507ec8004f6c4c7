'use strict';

/*
 * The fleet's rules without a server (issue 33): what an accounts file may hold (never a
 * password), how an upstream's error is told apart from a fault of ours, and the status
 * figures (rate, ETA) from account rows. The whole run on a real Dovecot is
 * packages/bench/test/fleet.test.js.
 */

const { parseAccounts, statusOf, failureOf } = require('../lib/fleet');
const { errors } = require('@mailgate/core');

describe('accounts file', () => {
  test('CSV with a header and JSON lines give the same accounts', () => {
    const csv = parseAccounts(
      'user,host,port,login,password_env,password_file,security,folders,relay\n' +
        'alice,imap.old,993,alice@old,ALICE_PW,,tls,INBOX;Sent,lmtp://mx.old:24\n' +
        '# a comment\n' +
        'bob,imap.old,,,,/run/pw/bob,,\n',
      'a.csv',
    );
    const jsonl = parseAccounts(
      '{"user":"alice","host":"imap.old","port":993,"login":"alice@old","passwordEnv":"ALICE_PW","security":"tls","folders":["INBOX","Sent"],"relay":"lmtp://mx.old"}\n' +
        '{"user":"bob","host":"imap.old","passwordFile":"/run/pw/bob"}\n',
      'a.jsonl',
    );
    expect(csv).toEqual(jsonl);
    expect(csv).toEqual([
      {
        user: 'alice',
        host: 'imap.old',
        port: 993,
        login: 'alice@old',
        passwordSource: 'env:ALICE_PW',
        security: 'tls',
        folders: ['INBOX', 'Sent'],
        relay: 'lmtp://mx.old:24',
      },
      {
        user: 'bob',
        host: 'imap.old',
        port: 143,
        login: 'bob',
        passwordSource: 'file:/run/pw/bob',
        security: 'starttls',
        folders: null,
        relay: null,
      },
    ]);
  });

  test.each([
    ['{"user":"a","host":"h","password":"secret"}', /a password never goes in the file/],
    [
      '{"user":"a","host":"h","passwordEnv":"X","relay":"h:24"}',
      /relay must be lmtp:\/\/host:port/,
    ],
    ['{"user":"a","host":"h"}', /exactly one of password_env, password_file/],
    ['{"user":"a","host":"h","passwordEnv":"X","passwordFile":"/f"}', /exactly one/],
    ['{"user":"a b","host":"h","passwordEnv":"X"}', /user missing or not a plain name/],
    ['{"user":"a","host":"h","port":70000,"passwordEnv":"X"}', /port must be 1..65535/],
    ['{"user":"a","host":"h","passwordEnv":"X","security":"none"}', /security must be/],
    [
      '{"user":"a","host":"h","passwordEnv":"X"}\n{"user":"a","host":"h","passwordEnv":"Y"}',
      /user a twice/,
    ],
    ['user,port\na,1', /header must name user and host/],
    ['{not json', /line 1: not a JSON object/],
  ])('refused with ACCOUNTS_INVALID: %s', (text, message) => {
    let err;
    try {
      parseAccounts(text, 'f');
    } catch (e) {
      err = e;
    }
    expect(err && err.code).toBe('ACCOUNTS_INVALID');
    expect(err.message).toMatch(message);
    // The refusal never repeats a password it was given.
    expect(err.message).not.toMatch(/secret/);
  });
});

describe('upstream errors', () => {
  const acct = { host: 'imap.old', port: 143 };
  test('a refused connection, NO [UNAVAILABLE] and a timeout are upstream trouble, retried', () => {
    for (const e of [
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('Command failed'), { serverResponseCode: 'UNAVAILABLE' }),
      Object.assign(new Error('Socket timeout'), { code: 'ETIMEOUT' }),
    ]) {
      expect(failureOf(e, acct)).toMatchObject({ code: 'UPSTREAM_IMAP_FAILED', permanent: false });
      expect(failureOf(e, acct).message).toMatch(/^Upstream IMAP server imap\.old:143: /);
    }
  });
  test('a refused login fails the account at once; an unknown fault is INTERNAL without its text', () => {
    expect(
      failureOf(new errors.UPSTREAM_IMAP_FAILED('imap.old:143', 'login failed'), acct),
    ).toMatchObject({ code: 'UPSTREAM_IMAP_FAILED', permanent: true });
    const f = failureOf(new TypeError('x is undefined at /srv/secret/path.js'), acct);
    expect(f).toEqual({
      code: 'INTERNAL',
      message: 'internal error (see the worker log)',
      permanent: false,
    });
  });
});

describe('status figures', () => {
  const now = new Date('2026-11-28T12:00:00Z');
  const at = (s) => new Date(now.getTime() - s * 1000);
  const row = (o) => ({
    host: 'h',
    port: 143,
    worker: 'w1',
    messages: 0,
    bytes: 0,
    runBaseMessages: 0,
    upstreamMessages: null,
    startedAt: null,
    finishedAt: null,
    ...o,
  });

  test('rate over what this run moved, ETA from the known totals (the mean for the unknown)', () => {
    const st = statusOf(now, [
      row({ user: 'a', state: 'cutover', messages: 100, bytes: 1000, upstreamMessages: 100, startedAt: at(20), finishedAt: at(10) }),
      row({ user: 'b', state: 'running', messages: 60, bytes: 600, runBaseMessages: 20, upstreamMessages: 100, startedAt: at(10) }),
      row({ user: 'c', state: 'queued' }),
      row({ user: 'd', state: 'failed', messages: 0 }),
    ]); // prettier-ignore
    expect(st.fleet).toMatchObject({
      accounts: 4,
      queued: 1,
      running: 1,
      cutover: 1,
      failed: 1,
      messages: 160,
      bytes: 1600,
      seconds: 20,
      // (100 + 40) moved in 20 s
      rate: 7,
    });
    // left: b 40, c unknown → the mean of the known totals (100): 140 at 7/s
    expect(st.fleet.etaSeconds).toBe(20);
    expect(st.running).toEqual([
      {
        user: 'b',
        upstream: 'h:143',
        worker: 'w1',
        messages: 60,
        bytes: 600,
        upstreamMessages: 100,
        rate: 4,
        etaSeconds: 10,
      },
    ]);
  });

  test('a finished fleet: rate over its own span, ETA 0', () => {
    const st = statusOf(now, [
      row({ user: 'a', state: 'cutover', messages: 50, startedAt: at(100), finishedAt: at(90) }),
      row({ user: 'b', state: 'cutover', messages: 50, startedAt: at(95), finishedAt: at(80) }),
    ]);
    expect(st.fleet).toMatchObject({ seconds: 20, rate: 5, etaSeconds: 0 });
  });
});
