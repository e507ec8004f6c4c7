'use strict';

const { splitMessage, headerFields } = require('./keys');

/*
 * The search terms are chosen from the mailbox itself by counting, as the issue asks: a word
 * in ~1% and one in ~25% of the messages, a sender with ~1%, a day with ~1%. Counting runs
 * on the raw bytes of the built mailbox (decoding is left to the backends; the Enron set is
 * almost all plain 7-bit text, and the agreement check catches any disagreement). Ties go to
 * the alphabetically first candidate, so the choice is deterministic.
 */

// Whole runs of ASCII letters: a word as the word search tokenises it (a run cut short would
// be a substring of a longer token, found by `text:` but never by word search).
// Runs inside an address, host name or path (abalasu@enron.com, www.example.com) are left
// out, and X.400 parts (CN=Abalasu): PostgreSQL's parser keeps those whole as one token, so
// word search never finds them.
const WORD = /(?<![\w@./=-])[A-Za-z]+(?![\w@/=-]|\.\w)/g;
// Candidates for the chosen words: long enough to be a real word rather than a header or MIME
// token fragment, short enough to be one a user would type.
const CANDIDATE = /^[a-z]{5,12}$/;

/**
 * Per-message facts used for counting.
 * @param {Buffer} raw
 * @returns {{words: Set<string>, lower: string, from: string|null, day: string|null}}
 */
function messageFacts(raw) {
  const { header } = splitMessage(raw);
  const fields = headerFields(header);
  const text = raw.toString('latin1');
  const words = new Set();
  for (const m of text.matchAll(WORD)) words.add(m[0].toLowerCase());
  const fromField = fields.get('from') || '';
  const addr = /<([^>]+)>/.exec(fromField) || /([^\s<>"]+@[^\s<>"]+)/.exec(fromField);
  const date = fields.has('date')
    ? new Date(fields.get('date').replace(/\s*\([^)]*\)\s*$/, ''))
    : null;
  const day = date && !Number.isNaN(date.getTime()) ? date.toISOString().slice(0, 10) : null;
  return { words, lower: text.toLowerCase(), from: addr ? addr[1].toLowerCase() : null, day };
}

/**
 * The key of `counts` whose count is nearest to target (ties: alphabetical first).
 * @param {Map<string, number>} counts
 * @param {number} target
 * @param {(k: string) => boolean} [ok]
 * @returns {{value: string, count: number}|null}
 */
function nearest(counts, target, ok = () => true) {
  let best = null;
  for (const [k, n] of counts) {
    if (!ok(k)) continue;
    const d = Math.abs(n - target);
    if (!best || d < best.d || (d === best.d && k < best.value)) best = { value: k, count: n, d };
  }
  return best && { value: best.value, count: best.count };
}

/**
 * Chooses the benchmark's queries for one mailbox.
 * @param {Buffer[]|Iterable<Buffer>} raws the mailbox's messages
 * @param {{rare?: number, common?: number}} [o] target fractions (default 0.01 and 0.25)
 * @returns {{messages: number, queries: Array<{request: string, query: string, term: string, count: number, fraction: number, substringCount?: number}>, extra: Array<{request: string, query: string, term: string, count: number, fraction: number}>}}
 */
function selectQueries(raws, o = {}) {
  const rare = o.rare ?? 0.01;
  const common = o.common ?? 0.25;
  const facts = [...raws].map(messageFacts);
  const n = facts.length;
  const wordCounts = new Map();
  const fromCounts = new Map();
  const dayCounts = new Map();
  const bump = (m, k) => m.set(k, (m.get(k) || 0) + 1);
  for (const f of facts) {
    for (const w of f.words) bump(wordCounts, w);
    if (f.from) bump(fromCounts, f.from);
    if (f.day) bump(dayCounts, f.day);
  }
  const substringCount = (term) => facts.filter((f) => f.lower.includes(term)).length;
  const frac = (c) => (n ? c / n : 0);
  // Header-name words (received, content …) would measure header scanning, not text search.
  const HEADERISH = new Set(['received', 'content', 'subject', 'message', 'mime', 'version']);
  const wordOk = (w) => CANDIDATE.test(w) && !HEADERISH.has(w);
  // The nearest words by count, then the first whose substring count stays within 10% of its
  // word count: the two semantics then measure the same selectivity.
  const pick = (target) => {
    const ranked = [...wordCounts]
      .filter(([w]) => wordOk(w))
      .map(([w, c]) => ({ value: w, count: c, d: Math.abs(c - target * n) }))
      .sort((a, b) => a.d - b.d || (a.value < b.value ? -1 : 1))
      .slice(0, 40);
    const close = ranked.find((c) => substringCount(c.value) <= c.count * 1.1);
    const best = close || ranked[0];
    return best ? { value: best.value, count: best.count } : { value: 'happy', count: 0 };
  };
  const rareWord = pick(rare);
  const commonWord = pick(common);
  const sender = nearest(fromCounts, rare * n) || { value: 'nobody@example.invalid', count: 0 };
  const day = nearest(dayCounts, rare * n) || { value: '1970-01-01', count: 0 };
  const q = (request, query, term, count) => ({
    request,
    query,
    term,
    count,
    fraction: frac(count),
  });
  const queries = [
    q('text_rare', `text:${rareWord.value}`, rareWord.value, substringCount(rareWord.value)),
    q(
      'text_common',
      `text:${commonWord.value}`,
      commonWord.value,
      substringCount(commonWord.value),
    ),
    q('word_rare', rareWord.value, rareWord.value, rareWord.count),
    q('word_common', commonWord.value, commonWord.value, commonWord.count),
    q('from', `from:${sender.value}`, sender.value, sender.count),
    q('date', `on:${day.value}`, day.value, day.count),
    q('text_absent', 'text:zqxwvjkq', 'zqxwvjkq', substringCount('zqxwvjkq')),
  ];
  // The study's own words, always run as well.
  const extra = [];
  for (const w of ['happy', 'free']) {
    extra.push(q(`text_${w}`, `text:${w}`, w, substringCount(w)));
    extra.push(q(`word_${w}`, w, w, wordCounts.get(w) || 0));
  }
  return { messages: n, queries, extra };
}

module.exports = { selectQueries, messageFacts, nearest };
