'use strict';

const { checkTargets, targetsMarkdown } = require('../lib/targets');
const { markdown } = require('../lib/report');

const DOORS = { 'mailgate-imap': 'imap', 'dovecot-maildir': 'imap', 'dovecot-mbox': 'imap' };

const row = (backend, request, median, opts = {}) => ({
  backend,
  door: DOORS[backend] || 'store',
  size: opts.size || 'large',
  messages: 21282,
  request,
  phase: opts.phase || 'warm',
  ms: { median, min: median, max: median },
  matches: opts.matches ?? 1,
  agrees: opts.agrees ?? true,
});

const byCheck = (checks) => Object.fromEntries(checks.map((c) => [c.check, c]));

describe('targets check', () => {
  test('absolute targets: under the limit is met, at or over it missed, absent not measured', () => {
    const c = byCheck(
      checkTargets([
        row('pg', 'headers', 34.9),
        row('pg', 'text_rare', 50),
        row('pg', 'date', 2, { agrees: false }),
        row('pg', 'from', 1, { size: 'medium' }),
      ]),
    );
    expect(c['pg headers (large, warm, store door)'].met).toBe(true);
    expect(c['pg headers (large, warm, store door)'].issue).toBe(13);
    expect(c['pg text_rare (large, warm, store door)'].met).toBe(false);
    // A fast wrong answer is not a met target.
    expect(c['pg date (large, warm, store door)'].met).toBe(false);
    expect(c['pg date (large, warm, store door)'].measured).toMatch(/disagrees/);
    // Only the large mailbox counts; a medium figure is "not measured".
    expect(c['pg from (large, warm, store door)'].met).toBeNull();
  });

  test('issue 6 ratios use the best agreeing flat-file backend of the store door', () => {
    const c = byCheck(
      checkTargets([
        row('pg', 'headers', 40),
        // Dovecot is the imap door: not the reference of a store-door check
        row('dovecot-maildir', 'headers', 50),
        // faster but wrong: not the reference
        row('maildir', 'headers', 100, { agrees: false }),
        row('mbox', 'headers', 500),
        row('pg', 'headers', 100, { phase: 'cold' }),
        row('maildir', 'headers', 900, { phase: 'cold' }),
        row('pg', 'expunge_20pct', 90),
        row('dovecot-maildir', 'expunge_20pct', 80),
      ]),
    );
    const warm = c['pg headers (large, warm) vs best flat file (store door)'];
    expect(warm.met).toBe(true);
    expect(warm.measured).toMatch(/^12\.5× \(mbox 500 ms \/ pg 40\.0 ms\)$/);
    const cold = c['pg headers (large, cold) vs best flat file (store door)'];
    expect(cold.met).toBe(false);
    expect(cold.measured).toMatch(/^9\.0×/);
    // pg (store) against Dovecot (imap) is labelled as a ratio across doors.
    const ex = c['pg expunge_20pct (large, warm) vs dovecot-maildir'];
    expect(ex.met).toBe(false);
    expect(ex.measured).toMatch(/across doors: imap ÷ store/);
    expect(c['pg expunge_1pct (large, warm) vs dovecot-maildir'].met).toBeNull();
  });

  test('issue 13: the store door list view has its own absolute and tenfold checks', () => {
    const c = byCheck(
      checkTargets([
        row('pg', 'headers_list', 20),
        row('pg', 'headers_list', 150, { phase: 'cold' }),
        row('mbox', 'headers_list', 1900, { phase: 'cold' }),
        // the full rows stay checked beside it
        row('pg', 'headers', 700, { phase: 'cold' }),
        row('mbox', 'headers', 1900, { phase: 'cold' }),
      ]),
    );
    expect(c['pg headers_list (large, warm, store door)'].met).toBe(true);
    expect(c['pg headers_list (large, warm, store door)'].issue).toBe(13);
    const list = c['pg headers_list (large, cold) vs best flat file (store door)'];
    expect(list.met).toBe(true);
    expect(list.measured).toMatch(/^12\.7× \(mbox 1900 ms \/ pg 150 ms\)$/);
    expect(c['pg headers (large, cold) vs best flat file (store door)'].met).toBe(false);
    expect(c['pg headers_list (large, warm) vs best flat file (store door)'].met).toBeNull();
  });

  test('issue 13: mailgate-imap headers (both variants) against dovecot-maildir through the same client', () => {
    const c = byCheck(
      checkTargets([
        row('mailgate-imap', 'headers', 99),
        row('dovecot-maildir', 'headers', 271),
        row('mailgate-imap', 'headers_list', 80),
        row('dovecot-maildir', 'headers_list', 78),
      ]),
    );
    const env = c['mailgate-imap headers (large, warm, imap door) vs dovecot-maildir'];
    expect(env.met).toBe(true);
    expect(env.measured).toBe('2.7× (dovecot-maildir 271 ms / mailgate-imap 99.0 ms)');
    const list = c['mailgate-imap headers_list (large, warm, imap door) vs dovecot-maildir'];
    expect(list.met).toBe(false);
  });

  test('issue 13: substring search ≥ 10× the best Dovecot, warm and cold, same door and across doors', () => {
    const c = byCheck(
      checkTargets([
        row('mailgate-imap', 'text_rare', 30),
        row('pg', 'text_rare', 25),
        row('dovecot-maildir', 'text_rare', 1000),
        row('dovecot-mbox', 'text_rare', 400),
        row('mailgate-imap', 'text_rare', 300, { phase: 'cold' }),
        row('dovecot-mbox', 'text_rare', 2600, { phase: 'cold' }),
        // Dovecot's own answer differs (its quoted-printable decoding): the ratio is still
        // given, against the fastest Dovecot, and says so.
        row('mailgate-imap', 'text_common', 60, { matches: 5331 }),
        row('dovecot-maildir', 'text_common', 900, { agrees: false, matches: 5332 }),
      ]),
    );
    const same = c['mailgate-imap text_rare (large, warm) vs best Dovecot'];
    expect(same.met).toBe(true);
    expect(same.measured).toBe('13.3× (dovecot-mbox 400 ms / mailgate-imap 30.0 ms)');
    const cross = c['pg text_rare (large, warm) vs best Dovecot'];
    expect(cross.met).toBe(true);
    expect(cross.measured).toMatch(/across doors: imap ÷ store/);
    expect(c['mailgate-imap text_rare (large, cold) vs best Dovecot'].met).toBe(false);
    expect(c['pg text_rare (large, cold) vs best Dovecot'].met).toBeNull();
    const common = c['mailgate-imap text_common (large, warm) vs best Dovecot'];
    expect(common.met).toBe(true);
    expect(common.measured).toMatch(/dovecot-maildir's answer differs: 5332 matches/);
  });

  test('results.md carries the table, with counts, when the run has the large size', () => {
    const results = [row('pg', 'headers', 30), row('dovecot-maildir', 'headers', 400)];
    const md = markdown({ machine: {}, results });
    expect(md).toMatch(
      /^## Targets \(large mailbox; issue 6: the PostgreSQL path, issue 13: every door\)$/m,
    );
    expect(md).toMatch(
      /^\| 13 \| pg headers \(large, warm, store door\) \| < 35 ms \| 30\.0 ms \| met \|$/m,
    );
    expect(md).toMatch(/^1 met, 0 missed, \d+ not measured\.$/m);
    expect(targetsMarkdown(checkTargets(results))).toMatch(/\*\*missed\*\*|not measured/);
    const imapOnly = markdown({ machine: {}, results: [row('mailgate-imap', 'headers', 30)] });
    expect(imapOnly).toMatch(/^## Targets/m);
    const small = markdown({ machine: {}, results: [row('pg', 'headers', 30, { size: 'small' })] });
    expect(small).not.toMatch(/Targets/);
  });
});
