'use strict';

// Letters (any script), combining marks (so Devanagari or decomposed accents stay inside the
// word) and digits; everything else separates tokens, as PostgreSQL's default parser does for
// plain words. Its special token classes (e-mail addresses, hosts, URLs, hyphenated compounds,
// decimals) are deliberately not imitated: see README "Word search".
const TOKEN_RE = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Split text into word-search tokens, approximately like to_tsvector('simple', text):
 * lowercased, split on anything that is not a letter, mark or digit, no stemming, no stop words.
 * @param {string|null|undefined} text
 * @returns {string[]} tokens in order (duplicates kept, so phrases can be matched)
 */
function tokenize(text) {
  if (typeof text !== 'string' || text === '') return [];
  return text.toLowerCase().match(TOKEN_RE) || [];
}

module.exports = { tokenize };
