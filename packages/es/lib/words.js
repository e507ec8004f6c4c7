'use strict';

/*
 * What a word is, for word and phrase search on ES: exactly what PostgreSQL's text-search
 * parser says it is. The mirror never tokenizes text itself. A document's `words` field is
 * built from the message's stored tsvector (lexemes with positions), and a query's words
 * are turned into lexemes by PostgreSQL (to_tsvector('simple', …), the same parser and
 * dictionary as plainto_tsquery / phraseto_tsquery) before they reach ES. So both backends
 * agree on `__KERNEL__` (kernel), `kernel's` (kernel, s), `die_if_kernel`, e-mail addresses
 * and paths (one lexeme each), hyphenated words (whole and parts) and every script.
 *
 * ES only has to keep each lexeme one token, in order: the `words` analyzer is the standard
 * tokenizer alone (core ES, no analysis-common), and a lexeme that is not plain [a-z0-9] is
 * written as `_` + hex of its UTF-8 bytes, which that tokenizer keeps whole (`_` joins word
 * characters in UAX #29) and which no plain lexeme can equal (plain ones never hold `_`).
 * This module owns that encoding; it must never split or normalise text on its own.
 */

// Standard tokenizer keeps [a-z0-9]+ as one token; everything else is hex-encoded.
const PLAIN = /^[a-z0-9]+$/;
// Fills a position PostgreSQL left empty, so that positions, and so phrases, stay aligned.
// `g` is not a hex digit, so no encoded lexeme equals it, and no query ever contains it.
const GAP = '_gap';
// PostgreSQL refuses lexemes over 2047 bytes: encoded, 1 + 2 × 2047 characters.
const MAX_TOKEN_CHARS = 4096;

/**
 * The ES token of one PostgreSQL lexeme.
 * @param {string} lexeme
 * @returns {string}
 */
function encodeLexeme(lexeme) {
  return PLAIN.test(lexeme) ? lexeme : `_${Buffer.from(lexeme, 'utf8').toString('hex')}`;
}

/**
 * The `words` text of a document from its tsvector's (position, lexeme) pairs, ordered by
 * position. A position PostgreSQL left empty (a lexeme's positions past its 256th are
 * dropped) becomes a gap token; lexemes sharing a position (PostgreSQL clamps positions at
 * 16,383) are separated by one, so no phrase spans them (README "Word search").
 * @param {Array<[number, string]>|null} seq
 * @returns {string}
 */
function wordsText(seq) {
  if (!Array.isArray(seq) || !seq.length) return '';
  const out = [];
  let prev = null;
  for (const [pos, lexeme] of seq) {
    if (prev !== null) {
      const gap = pos > prev ? pos - prev - 1 : 1;
      for (let i = 0; i < gap; i++) out.push(GAP);
    }
    out.push(encodeLexeme(lexeme));
    prev = pos;
  }
  return out.join(' ');
}

/**
 * Query tokens for a word or phrase from PostgreSQL's lexemes of that text (in order).
 * @param {Array<[number, string]>|null} seq
 * @returns {string[]} encoded tokens; empty when the text has no lexeme (matches nothing)
 */
function queryTokens(seq) {
  return Array.isArray(seq) ? seq.map(([, lexeme]) => encodeLexeme(lexeme)) : [];
}

/**
 * The texts of every word and phrase node of a query AST (to be turned into lexemes).
 * @param {object} ast
 * @returns {string[]} distinct values
 */
function textValues(ast) {
  const out = new Set();
  const walk = (n) => {
    if (!n || typeof n !== 'object') return;
    if (n.type === 'word' || n.type === 'phrase') out.add(n.value);
    if (Array.isArray(n.children)) n.children.forEach(walk);
    if (n.child) walk(n.child);
  };
  walk(ast);
  return [...out];
}

module.exports = { encodeLexeme, wordsText, queryTokens, textValues, GAP, MAX_TOKEN_CHARS };
