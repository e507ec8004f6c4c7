'use strict';

const { simpleParser } = require('mailparser');
const { parseMessage, findPart, checkMessage } = require('./parse');
const { rawToUnicode, decodeWords } = require('./header');
const { decodeTransfer, decodeEntities } = require('./body');
const { cleanText } = require('./charset');

// Allow-list sanitizer for message display. Everything not listed is dropped: the tag
// (its text content is kept), or, for the elements below, the tag and its content.
const DROP_WITH_CONTENT = new Set(
  (
    'script style iframe object embed applet noscript template textarea select title head ' +
    'svg math frameset noembed noframes xml button'
  ).split(' '),
);
const ALLOWED_TAGS = new Set(
  (
    'a abbr address b bdi bdo big blockquote br caption center cite code col colgroup dd del ' +
    'dfn div dl dt em font h1 h2 h3 h4 h5 h6 hr i img ins kbd li ol p pre q s samp small span ' +
    'strike strong sub sup table tbody td tfoot th thead tr tt u ul var wbr'
  ).split(' '),
);
const VOID_TAGS = new Set(['br', 'hr', 'img', 'col', 'wbr']);
const ALLOWED_ATTRS = new Set(
  (
    'href src alt title width height align valign bgcolor color border cellpadding ' +
    'cellspacing colspan rowspan face size dir lang start type span summary style'
  ).split(' '),
);
const URL_ATTRS = new Set(['href', 'src']);
const SAFE_URL = /^(?:https?:|mailto:|cid:|#|\/|[^:/?#]*(?:[/?#]|$))/i;
const SAFE_DATA_IMG = /^data:image\/(?:png|gif|jpe?g|webp);base64,/i;

function escapeAttr(s) {
  return s
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

function escapeText(s) {
  return s.replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function cleanAttr(tag, name, value) {
  if (!ALLOWED_ATTRS.has(name)) return null; // drops on* handlers, srcset, formaction...
  const decoded = decodeEntities(value);
  if (URL_ATTRS.has(name)) {
    // browsers ignore whitespace/control characters inside the scheme ("java\tscript:")
    // eslint-disable-next-line no-control-regex -- control characters are exactly the target
    const compact = decoded.replace(/[\u0000-\u0020\u007f-\u009f]+/g, '');
    if (tag === 'img' && name === 'src' && SAFE_DATA_IMG.test(compact)) return decoded;
    if (!SAFE_URL.test(compact)) return null;
  }
  if (
    name === 'style' &&
    /expression|javascript|vbscript|url\s*\(|@import|behavior|binding/i.test(decoded)
  ) {
    return null;
  }
  return decoded;
}

/**
 * Small allow-list HTML sanitizer for displaying mail: drops script/style/iframe/object and
 * similar elements with their content, drops every tag not on the allow-list (keeping its
 * text), keeps only harmless attributes, removes on* handlers and javascript:/vbscript:/data:
 * URLs (data:image in <img> is allowed), and re-serializes what is kept with quoted,
 * escaped attributes. Links get rel="noopener noreferrer" and target="_blank".
 *
 * @param {string} html
 * @returns {string}
 */
function sanitizeHtml(html) {
  if (!html) return '';
  const s = String(html)
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '')
    .replace(/<!\[CDATA\[[\s\S]*?(?:\]\]>|$)/g, '');
  let out = '';
  // One tokenizer pass; quoted attribute values may contain '>' (and '<script>')
  const tagRe = /<(\/?)([A-Za-z][A-Za-z0-9:-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|<[!?][^>]*>/g;
  let last = 0;
  let skipping = null; // inside a dropped element: ignore everything up to its end tag
  let m;
  while ((m = tagRe.exec(s)) !== null) {
    if (skipping === null) out += escapeText(s.slice(last, m.index));
    last = m.index + m[0].length;
    if (!m[2]) continue; // <!doctype>, <?xml?>
    const tag = m[2].toLowerCase();
    if (skipping !== null) {
      if (m[1] && tag === skipping) skipping = null;
      continue;
    }
    if (DROP_WITH_CONTENT.has(tag)) {
      if (!m[1] && !/\/\s*$/.test(m[3])) skipping = tag;
      continue;
    }
    if (!ALLOWED_TAGS.has(tag)) continue;
    if (m[1]) {
      if (!VOID_TAGS.has(tag)) out += `</${tag}>`;
      continue;
    }
    let attrs = '';
    const attrRe = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
    let a;
    while ((a = attrRe.exec(m[3])) !== null) {
      const name = a[1].toLowerCase();
      const value = a[2] ?? a[3] ?? a[4] ?? '';
      const clean = cleanAttr(tag, name, value);
      if (clean !== null) attrs += ` ${name}="${escapeAttr(clean)}"`;
    }
    if (tag === 'a') attrs += ' rel="noopener noreferrer" target="_blank"';
    out += `<${tag}${attrs}>`;
  }
  if (skipping === null) out += escapeText(s.slice(last));
  return out;
}

function addr(a) {
  return { name: a.name || '', address: a.address || '' };
}

function flattenAddresses(obj) {
  const out = [];
  for (const o of [].concat(obj || [])) {
    for (const v of o.value || []) {
      if (Array.isArray(v.group)) out.push(...v.group.map(addr));
      else out.push(addr(v));
    }
  }
  return out;
}

/**
 * Parses a message for the message view of the HTTP API, with mailparser's simpleParser
 * (slower but complete; not used during import). Headers and the attachment list come from
 * this package's own parser so part numbers match {@link getAttachment} and the stored
 * `attachments` column.
 *
 * @param {Buffer} raw
 * @returns {Promise<{ headers: {key: string, value: string}[], subject: string|null,
 *   from: import('./header').Address|null, to: import('./header').Address[],
 *   cc: import('./header').Address[], date: Date|null, messageId: string|null,
 *   text: string, html: string|null,
 *   attachments: {part: string, contentType: string, filename: string|null, size: number,
 *   contentId: string|null}[] }>}
 */
async function parseForDisplay(raw) {
  const { raw: buf, top } = checkMessage(raw, Infinity, true);
  const own = parseMessage(buf, { maxBytes: Infinity, maxBodyText: 1 });
  const mail = await simpleParser(buf, { skipImageLinks: true, skipTextLinks: true });
  const headers = top.fields.map((f) => ({
    key: f.name,
    value: cleanText(decodeWords(rawToUnicode(f.value))),
  }));
  const from = flattenAddresses(mail.from);
  let html = null;
  if (typeof mail.html === 'string' && mail.html) html = cleanText(sanitizeHtml(mail.html));
  return {
    headers,
    subject: own.subject,
    from: from[0] || own.from,
    to: flattenAddresses(mail.to),
    cc: flattenAddresses(mail.cc),
    // not mailparser's date: it substitutes the current time for an unparsable Date header
    date: own.date,
    messageId: own.messageId,
    text: cleanText(mail.text || ''),
    html,
    attachments: own.attachments.map((a) => ({
      part: a.part,
      contentType: a.contentType,
      filename: a.filename,
      size: a.size,
      contentId: a.contentId,
    })),
  };
}

/**
 * Returns the decoded content of one part, addressed by IMAP section number ('2', '2.1') as
 * listed in `attachments` (uuencoded blocks: '1.uu1').
 *
 * @param {Buffer} raw
 * @param {string} part
 * @returns {{ contentType: string, filename: string|null, content: Buffer } | null}
 */
function getAttachment(raw, part) {
  const found = findPart(raw, part);
  if (!found) return null;
  return {
    contentType: found.info.type,
    filename: found.info.filename,
    content: decodeTransfer(found.body, found.info.cte),
  };
}

module.exports = { parseForDisplay, getAttachment, sanitizeHtml };
