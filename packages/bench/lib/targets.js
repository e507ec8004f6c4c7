'use strict';

const { FLAT_FILE } = require('./backends');

/*
 * The issues' bars, checked against a run instead of read off tables by hand (issue 6: the
 * PostgreSQL path; issue 13: the same path behind each door, against Dovecot through the same
 * client). Absolute targets are warm medians on the large mailbox; ratios compare backends
 * measured in the same run (the figures that count: same machine, same moment). Every check
 * names its door(s): a ratio between two doors says "across doors".
 */

/** Warm median targets for `pg` (store door) on the large mailbox, in ms (issues 6 and 13). */
const PG_LARGE_TARGETS = Object.freeze({
  headers: 35,
  // Issue 13 item 3: the list-view projection through the storage interface.
  headers_list: 35,
  text_rare: 50,
  text_common: 150,
  word_rare: 10,
  word_common: 50,
  from: 10,
  date: 5,
  expunge_1pct: 20,
  expunge_20pct: 100,
});

/** Requests where pg must be ≥ 10x faster than the best flat-file backend of its own door. */
const TENFOLD = Object.freeze(['headers', 'headers_list', 'text_rare', 'text_common']);

/** Requests where pg must beat Dovecot-on-maildir (issue 6; a cross-door comparison now). */
const BEAT_DOVECOT_MAILDIR = Object.freeze(['expunge_1pct', 'expunge_20pct']);

/** Issue 13: both header variants of mailgate-imap faster than Dovecot-maildir (imap door). */
const IMAP_HEADERS = Object.freeze(['headers', 'headers_list']);

/** Issue 13: substring searches ≥ 10× faster than the best Dovecot, warm and cold. */
const TENFOLD_DOVECOT = Object.freeze(['text_rare', 'text_common']);

const DOVECOT = Object.freeze(['dovecot-mbox', 'dovecot-maildir']);

/** A result's door (results written before doors existed: by backend name). */
const doorOf = (r) =>
  r.door ||
  (r.backend.endsWith('-api')
    ? 'api'
    : r.backend.startsWith('dovecot') || r.backend === 'mailgate-imap'
      ? 'imap'
      : 'store');

const find = (results, q) =>
  results.find(
    (r) =>
      r.backend === q.backend &&
      r.size === q.size &&
      r.request === q.request &&
      r.phase === q.phase,
  );

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/**
 * The fastest reference among `names` for one request. An agreeing answer is preferred; when
 * no reference agrees (e.g. Dovecot's `text:would`, 5,332 against 5,331 after its own
 * quoted-printable decoding), the fastest one is used and the check says its answer differs,
 * so that the ratio is still shown but never silently.
 */
function bestOf(results, names, q) {
  const rows = results.filter(
    (r) =>
      names.includes(r.backend) &&
      r.size === q.size &&
      r.request === q.request &&
      r.phase === q.phase,
  );
  const fastest = (xs) => xs.reduce((b, r) => (!b || r.ms.median < b.ms.median ? r : b), null);
  return fastest(rows.filter((r) => r.agrees)) || fastest(rows);
}

/**
 * One "≥ N× faster" or "faster" check of `subject` against `ref`.
 * @returns {{measured: string, met: boolean|null}}
 */
function ratioCheck(subject, ref, factor) {
  if (!subject || !ref || !(subject.ms.median > 0)) return { measured: '–', met: null };
  const ratio = ref.ms.median / subject.ms.median;
  const notes = [];
  if (!subject.agrees) notes.push(`${subject.backend}'s answer disagrees`);
  if (!ref.agrees) notes.push(`${ref.backend}'s answer differs: ${ref.matches} matches`);
  const cross =
    doorOf(subject) !== doorOf(ref) ? `, across doors: ${doorOf(ref)} ÷ ${doorOf(subject)}` : '';
  return {
    measured:
      `${ratio.toFixed(1)}× (${ref.backend} ${fmt(ref.ms.median)} ms / ${subject.backend} ` +
      `${fmt(subject.ms.median)} ms${cross})` +
      (notes.length ? ` (${notes.join('; ')})` : ''),
    met: subject.agrees && ratio >= factor && (factor > 1 || ratio > 1),
  };
}

/**
 * Checks a run against the targets. Rows that are missing (a backend or size not run) are
 * reported as not measured, never as met; a subject whose answer failed the agreement check
 * is never "met" either.
 * @param {object[]} results results.json `results`
 * @param {{size?: string}} [opts] size the targets apply to (default large)
 * @returns {Array<{check: string, target: string, measured: string, met: boolean|null, issue: number}>}
 *   met null: not measured in this run
 */
function checkTargets(results, opts = {}) {
  const size = opts.size || 'large';
  const out = [];
  for (const [request, limit] of Object.entries(PG_LARGE_TARGETS)) {
    const r = find(results, { backend: 'pg', size, request, phase: 'warm' });
    out.push({
      issue: request.startsWith('headers') ? 13 : 6,
      check: `pg ${request} (${size}, warm, store door)`,
      target: `< ${limit} ms`,
      measured: r ? `${fmt(r.ms.median)} ms${r.agrees ? '' : ' (answer disagrees)'}` : '–',
      met: r ? r.agrees && r.ms.median < limit : null,
    });
  }
  // Issue 13: mailgate's IMAP server against Dovecot on maildir, one raw client for both.
  for (const request of IMAP_HEADERS) {
    const q = { size, request, phase: 'warm' };
    const c = ratioCheck(
      find(results, { ...q, backend: 'mailgate-imap' }),
      find(results, { ...q, backend: 'dovecot-maildir' }),
      1,
    );
    out.push({
      issue: 13,
      check: `mailgate-imap ${request} (${size}, warm, imap door) vs dovecot-maildir`,
      target: 'faster',
      ...c,
    });
  }
  // Issue 13: ≥ 10× the best Dovecot on substring search, warm and cold: through the same
  // door (mailgate-imap) and from the store door (pg; a ratio across doors, labelled so).
  for (const request of TENFOLD_DOVECOT) {
    for (const phase of ['warm', 'cold']) {
      for (const backend of ['mailgate-imap', 'pg']) {
        const q = { size, request, phase };
        const c = ratioCheck(find(results, { ...q, backend }), bestOf(results, DOVECOT, q), 10);
        out.push({
          issue: 13,
          check: `${backend} ${request} (${size}, ${phase}) vs best Dovecot`,
          target: '≥ 10× faster',
          ...c,
        });
      }
    }
  }
  // Issue 6: pg against the best flat-file backend of its own door (store: mbox, maildir).
  for (const request of TENFOLD) {
    for (const phase of ['warm', 'cold']) {
      const q = { size, request, phase };
      const pg = find(results, { ...q, backend: 'pg' });
      const flat = FLAT_FILE.filter((b) => !DOVECOT.includes(b));
      const best = bestOf(results, flat, q);
      out.push({
        issue: 6,
        check: `pg ${request} (${size}, ${phase}) vs best flat file (store door)`,
        target: '≥ 10× faster',
        ...ratioCheck(pg, best && best.agrees ? best : null, 10),
      });
    }
  }
  for (const request of BEAT_DOVECOT_MAILDIR) {
    const q = { size, request, phase: 'warm' };
    out.push({
      issue: 6,
      check: `pg ${request} (${size}, warm) vs dovecot-maildir`,
      target: 'faster',
      ...ratioCheck(
        find(results, { ...q, backend: 'pg' }),
        find(results, { ...q, backend: 'dovecot-maildir' }),
        1,
      ),
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
  const met = checks.filter((c) => c.met === true).length;
  const missed = checks.filter((c) => c.met === false).length;
  return [
    `${met} met, ${missed} missed, ${checks.length - met - missed} not measured.`,
    '',
    '| issue | check | target | measured | |',
    '|---|---|---|---|---|',
    ...checks.map(
      (c) => `| ${c.issue} | ${c.check} | ${c.target} | ${c.measured} | ${mark(c.met)} |`,
    ),
  ].join('\n');
}

module.exports = {
  checkTargets,
  targetsMarkdown,
  PG_LARGE_TARGETS,
  TENFOLD,
  BEAT_DOVECOT_MAILDIR,
  IMAP_HEADERS,
  TENFOLD_DOVECOT,
};
