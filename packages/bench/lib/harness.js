'use strict';

const crypto = require('node:crypto');

/**
 * Median, min and max of samples in ms (median of an even count: the mean of the middle two).
 * @param {number[]} xs
 * @returns {{median: number, min: number, max: number}}
 */
function summarize(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  const r = (x) => Math.round(x * 1000) / 1000;
  return { median: r(median), min: r(s[0]), max: r(s[s.length - 1]) };
}

/**
 * A canonical signature of a result: a multiset of keys (order ignored; genuine duplicate
 * messages in a mailbox count twice, so a backend that drops one disagrees) or a scalar.
 * @param {string[]|number} answer
 * @returns {string}
 */
function signature(answer) {
  if (!Array.isArray(answer)) return `n:${answer}`;
  const sorted = [...answer].sort();
  return `${sorted.length}:` + crypto.createHash('sha256').update(sorted.join('\n')).digest('hex');
}

/**
 * The agreement check: which backends gave the same answer to one request. The reference is
 * the answer most backends gave; on a tie, the answer of the earliest backend in the given
 * order (pg first: the store is the reference implementation of the query semantics). A lone
 * backend agrees with itself; a later `expected` answer (e.g. the keys an expunge was asked
 * to remove) overrides the vote.
 * @param {Array<{backend: string, answer: string[]|number}>} answers in backend order
 * @param {string[]|number} [expected]
 * @returns {Map<string, boolean>} backend → agrees
 */
function agreement(answers, expected) {
  const sigs = answers.map((a) => signature(a.answer));
  let ref;
  if (expected !== undefined) ref = signature(expected);
  else {
    const votes = new Map();
    for (const s of sigs) votes.set(s, (votes.get(s) || 0) + 1);
    let best = -1;
    for (const s of sigs) {
      if (votes.get(s) > best) {
        best = votes.get(s);
        ref = s;
      }
    }
  }
  return new Map(answers.map((a, i) => [a.backend, sigs[i] === ref]));
}

/**
 * Deterministic pseudo-random generator (mulberry32): the same seed picks the same messages
 * on every backend and every run.
 * @param {number} seed
 * @returns {() => number} in [0, 1)
 */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded sample of `fraction` of the items (at least one), in their original order.
 * @template T
 * @param {T[]} items
 * @param {number} fraction
 * @param {number} seed
 * @returns {T[]}
 */
function sample(items, fraction, seed) {
  const n = Math.max(1, Math.round(items.length * fraction));
  const idx = items.map((_, i) => i);
  const r = rng(seed);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]);
}

module.exports = { summarize, signature, agreement, rng, sample };
