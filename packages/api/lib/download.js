'use strict';

/*
 * Headers of downloads (raw messages, attachments): always `attachment`, never rendered in
 * the API's origin, so hostile HTML or SVG in a part cannot script against the API.
 */

/**
 * The part's content type when it is a well-formed `type/subtype`, else octet-stream.
 * @param {unknown} t
 * @returns {string}
 */
function safeContentType(t) {
  return typeof t === 'string' && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(t)
    ? t.toLowerCase()
    : 'application/octet-stream';
}

/**
 * RFC 6266: an ASCII fallback plus filename* for the exact (UTF-8) name.
 * @param {string|null} filename
 * @param {string} part MIME part number, names the file when the part has no name
 * @returns {string}
 */
function contentDisposition(filename, part) {
  const name = filename || `part-${part}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const star = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${star}`;
}

module.exports = { safeContentType, contentDisposition };
