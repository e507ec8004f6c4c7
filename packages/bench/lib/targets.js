'use strict';

const { FLAT_FILE } = require('./backends');

/*
 * The bar for the PostgreSQL path, checked against a run instead of read off tables
 * by hand: absolute targets on the large mailbox (warm medians), and ratios to the flat-file
 * backends measured in the same run (the figures that count: same machine, same moment).
 */

/** Warm median targets for `pg` on the large mailbox, in ms. */
const PG_LARGE_TARGETS = Object.freeze({
  headers: 35,
  text_rare: 50,
  text_common: 150,
  word_rare: 10,
  word_common: 50,
  from: 10,
  date: 5,
  expunge_1pct: 20,
  expunge_20pct: 100,
});

/** Requests where pg must be ≥ 10x faster than the best flat-file backend, warm and cold. */
const TENFOLD = Object.freeze(['headers', 'text_rare', 'text_common']);

/** Requests where pg must beat Dovecot-on-maildir. */
const BEAT_DOVECOT_MAILDIR = Object.freeze(['expunge_1pct', 'expunge_20pct']);

const find = (results, q) =>
  results.find(
    (r) =>
      r.backend === q.backend &&
      r.size === q.size &&
      r.request === q.request &&
      r.phase === q.phase,
  );

/**
 * Checks a run against the targets. Rows that are missing (a backend or size not run) are
 * reported as not measured, never as met; a pg answer that failed the agreement check is
 * never "met" either.
 * @param {object[]} results results.json `results`
 * @param {{size?: string}} [opts] size the targets apply to (default large)
 * @returns {Array<{check: string, target: string, measured: string, met: boolean|null}>}
 *   met null: not measured in this run
 */
function checkTargets(results, opts = {}) {
  const size = opts.size || 'large';
  const out = [];
  const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
  for (const [request, limit] of Object.entries(PG_LARGE_TARGETS)) {
    const r = find(results, { backend: 'pg', size, request, phase: 'warm' });
    out.push({
      check: `pg ${request} (${size}, warm)`,
      target: `< ${limit} ms`,
      measured: r ? `${fmt(r.ms.median)} ms${r.agrees ? '' : ' (answer disagrees)'}` : '–',
      met: r ? r.agrees && r.ms.median < limit : null,
    });
  }
  for (const request of TENFOLD) {
    for (const phase of ['warm', 'cold']) {
      const pg = find(results, { backend: 'pg', size, request, phase });
      const flat = results.filter(
        (r) =>
          FLAT_FILE.includes(r.backend) &&
          r.size === size &&
          r.request === request &&
          r.phase === phase &&
          r.agrees,
      );
      const best = flat.reduce((b, r) => (!b || r.ms.median < b.ms.median ? r : b), null);
      const ratio = pg && best && pg.ms.median > 0 ? best.ms.median / pg.ms.median : null;
      out.push({
        check: `pg ${request} (${size}, ${phase}) vs best flat file`,
        target: '≥ 10× faster',
        measured:
          ratio === null
            ? '–'
            : `${ratio.toFixed(1)}× (${best.backend} ${fmt(best.ms.median)} ms / pg ${fmt(pg.ms.median)} ms)`,
        met: ratio === null ? null : pg.agrees && ratio >= 10,
      });
    }
  }
  for (const request of BEAT_DOVECOT_MAILDIR) {
    const pg = find(results, { backend: 'pg', size, request, phase: 'warm' });
    const dm = find(results, { backend: 'dovecot-maildir', size, request, phase: 'warm' });
    out.push({
      check: `pg ${request} (${size}, warm) vs dovecot-maildir`,
      target: 'faster',
      measured: pg && dm ? `pg ${fmt(pg.ms.median)} ms / dovecot ${fmt(dm.ms.median)} ms` : '–',
      met: pg && dm ? pg.agrees && pg.ms.median < dm.ms.median : null,
    });
  }
  return out;
}

/**
 * The checks as a Markdown table.
 * @param {ReturnType<typeof checkTargets>} checks
 * @returns {string}
 */
function targetsMarkdown(checks) {
  const mark = (m) => (m === null ? 'not measured' : m ? 'met' : '**missed**');
  return [
    '| check | target | measured | |',
    '|---|---|---|---|',
    ...checks.map((c) => `| ${c.check} | ${c.target} | ${c.measured} | ${mark(c.met)} |`),
  ].join('\n');
}

module.exports = {
  checkTargets,
  targetsMarkdown,
  PG_LARGE_TARGETS,
  TENFOLD,
  BEAT_DOVECOT_MAILDIR,
};
