'use strict';

const { checkTargets, targetsMarkdown } = require('../lib/targets');
const { markdown } = require('../lib/report');

const row = (backend, request, median, opts = {}) => ({
  backend,
  size: opts.size || 'large',
  messages: 21282,
  request,
  phase: opts.phase || 'warm',
  ms: { median, min: median, max: median },
  matches: 1,
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
    expect(c['pg headers (large, warm)'].met).toBe(true);
    expect(c['pg text_rare (large, warm)'].met).toBe(false);
    // A fast wrong answer is not a met target.
    expect(c['pg date (large, warm)'].met).toBe(false);
    expect(c['pg date (large, warm)'].measured).toMatch(/disagrees/);
    // Only the large mailbox counts; a medium figure is "not measured".
    expect(c['pg from (large, warm)'].met).toBeNull();
  });

  test('ratios use the best agreeing flat-file backend of the same phase', () => {
    const c = byCheck(
      checkTargets([
        row('pg', 'headers', 40),
        row('dovecot-maildir', 'headers', 500),
        // faster but wrong: not the reference
        row('dovecot-mbox', 'headers', 100, { agrees: false }),
        row('mbox', 'headers', 3000),
        row('pg', 'headers', 100, { phase: 'cold' }),
        row('maildir', 'headers', 900, { phase: 'cold' }),
        row('pg', 'expunge_20pct', 90),
        row('dovecot-maildir', 'expunge_20pct', 80),
      ]),
    );
    const warm = c['pg headers (large, warm) vs best flat file'];
    expect(warm.met).toBe(true);
    expect(warm.measured).toMatch(/^12\.5× \(dovecot-maildir 500 ms/);
    const cold = c['pg headers (large, cold) vs best flat file'];
    expect(cold.met).toBe(false);
    expect(cold.measured).toMatch(/^9\.0×/);
    expect(c['pg expunge_20pct (large, warm) vs dovecot-maildir'].met).toBe(false);
    expect(c['pg expunge_1pct (large, warm) vs dovecot-maildir'].met).toBeNull();
  });

  test('results.md carries the table when the run has the large size', () => {
    const results = [row('pg', 'headers', 30), row('dovecot-maildir', 'headers', 400)];
    const md = markdown({ machine: {}, results });
    expect(md).toMatch(/^## Targets for the PostgreSQL path \(large mailbox\)$/m);
    expect(md).toMatch(/^\| pg headers \(large, warm\) \| < 35 ms \| 30\.0 ms \| met \|$/m);
    expect(targetsMarkdown(checkTargets(results))).toMatch(/\*\*missed\*\*|not measured/);
    const small = markdown({ machine: {}, results: [row('pg', 'headers', 30, { size: 'small' })] });
    expect(small).not.toMatch(/Targets/);
  });
});
