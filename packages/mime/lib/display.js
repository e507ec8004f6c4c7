'use strict';

// The message view: which body parts a reader sees, and their HTML made safe to show. Owns
// the display policy (sanitize-html allow-list, CSS filter, remote images, cid: mapping).
// Synchronous and bounded by the same parse budget as import; callers at request time go
// through ./request.js, which runs it off the event loop. Never used during import.

const sanitize = require('sanitize-html');
const { parseMessage, findPart, checkMessage, splitMultipart, entityInfo } = require('./parse');
const { checkDeadline } = require('./parse');
const { splitHeader } = require('./header');
const { decodeTransfer, htmlToText, findUuencoded } = require('./body');
const { cleanText, decodeBytes } = require('./charset');

const MAX_DEPTH = 50;
const MAX_PARTS = 10000;
// What a view carries at most: a reader scrolls through less, and the sanitiser's cost
// follows its input. Beyond these the view says `truncated: true`.
const MAX_HTML_CHARS = 4 * 1024 * 1024;
const MAX_TEXT_CHARS = 2 * 1024 * 1024;

const ALLOWED_TAGS = (
  'a abbr address b bdi bdo big blockquote br caption center cite code col colgroup dd del ' +
  'dfn div dl dt em font h1 h2 h3 h4 h5 h6 hr i img ins kbd li ol p pre q s samp small span ' +
  'strike strong sub sup table tbody td tfoot th thead tr tt u ul var wbr'
).split(' ');
const ALLOWED_ATTRS = (
  'href src alt title width height align valign bgcolor color border cellpadding ' +
  'cellspacing colspan rowspan face size dir lang start type span summary style'
).split(' ');
// Elements dropped with their content. The rest of an unknown element's text is kept
// (`<head>`, `<embed>` and friends must not swallow the body: issue 17.7).
const NON_TEXT = ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'template', 'xml'];

// CSS: an allow-list of properties, each value a plain token list. No url(), image-set(),
// expression(), escapes ("u\72l(") or quotes can pass, and no positioning (a fixed,
// high z-index overlay is how a fake login screen covers a webmail page).
const CSS_VALUE = /^(?:[-#\w.,%+!]+|\s|(?:rgba?|hsla?)\([\d\s.,%]+\))+$/i;
const CSS_PROPS = (
  'color background-color font font-family font-size font-style font-weight font-variant ' +
  'text-align text-decoration text-indent text-transform letter-spacing word-spacing ' +
  'line-height white-space vertical-align direction margin margin-top margin-right ' +
  'margin-bottom margin-left padding padding-top padding-right padding-bottom padding-left ' +
  'border border-top border-right border-bottom border-left border-color border-style ' +
  'border-width border-collapse border-spacing border-radius width height max-width ' +
  'min-width list-style-type display float clear'
).split(' ');
// Margins are never negative: a negative margin pulls an element over the content before or
// beside it, which is how a link is laid over text that looks harmless (issue 29.8).
const CSS_MARGIN = /^(?:\s*(?:auto|\d*\.?\d+(?:[a-z]{1,4}|%)?))+\s*$/i;
const ALLOWED_STYLES = {
  '*': Object.fromEntries(
    CSS_PROPS.map((p) => [p, [p.startsWith('margin') ? CSS_MARGIN : CSS_VALUE]]),
  ),
};
// A link keeps its colours and type face only: no size, box, display or float, so a crafted
// block link can never grow over the message (issue 29.8). Filtered before sanitize-html's
// own check, which merges per-tag allow-lists with '*' and so cannot narrow them.
const LINK_CSS_PROPS = new Set(
  (
    'color background-color font-family font-style font-weight font-variant text-decoration ' +
    'text-transform letter-spacing word-spacing'
  ).split(' '),
);

/** The declarations of a style attribute whose property a link may have (the rest dropped). */
function linkStyle(style) {
  return String(style || '')
    .split(';')
    .filter((d) => LINK_CSS_PROPS.has(d.split(':')[0].trim().toLowerCase()))
    .join(';');
}

/**
 * Sanitises mail HTML for display with sanitize-html (htmlparser2: one linear pass):
 * allow-listed tags and attributes, http(s)/mailto/cid links, data: images only in <img>,
 * CSS through a property and value allow-list. Remote images are blocked unless
 * `images: 'remote'` (tracking pixels): their URL moves to `data-blocked-src`. `cid:`
 * references become attachment URLs when `cidUrl` maps them.
 *
 * @param {string} html
 * @param {{images?: 'blocked'|'remote', cidUrl?: (cid: string) => string|null}} [opts]
 * @returns {string}
 */
function sanitizeHtml(html, opts = {}) {
  if (!html) return '';
  const remote = opts.images === 'remote';
  const cidUrl = opts.cidUrl || (() => null);
  return sanitize(String(html), {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: {
      '*': ALLOWED_ATTRS,
      img: [...ALLOWED_ATTRS, 'data-blocked-src'],
      // The values transformTags.a sets: without them in the list they were dropped again.
      a: [...ALLOWED_ATTRS, 'rel', 'target'],
    },
    nonTextTags: NON_TEXT,
    allowedSchemes: ['http', 'https', 'mailto', 'cid'],
    allowedSchemesByTag: { img: ['http', 'https', 'cid', 'data'] },
    allowProtocolRelative: true,
    allowedStyles: ALLOWED_STYLES,
    allowVulnerableTags: false,
    transformTags: {
      a: (tag, attribs) => {
        const out = { ...attribs, rel: 'noopener noreferrer', target: '_blank' };
        delete out.width;
        delete out.height;
        if (out.style !== undefined) out.style = linkStyle(out.style);
        if (/^\s*cid:/i.test(out.href || '')) out.href = cidUrl(out.href) || '';
        return { tagName: 'a', attribs: out };
      },
      img: (tag, attribs) => {
        const out = { ...attribs };
        const src = String(out.src || '').trim();
        if (/^cid:/i.test(src)) {
          const url = cidUrl(src);
          if (url) out.src = url;
          else delete out.src;
        } else if (/^data:/i.test(src)) {
          if (!/^data:image\/(?:png|gif|jpe?g|webp);base64,/i.test(src)) delete out.src;
        } else if (src && !remote) {
          out['data-blocked-src'] = src;
          delete out.src;
        }
        return { tagName: 'img', attribs: out };
      },
    },
  });
}

/**
 * Chooses the parts a reader sees (RFC 2046): in multipart/alternative the richest HTML and
 * the plain text; in other multiparts every inline text part in order; a nested message's
 * inline parts too. Attachments are never body. Bounded in depth, part count and size.
 */
class BodyWalker {
  constructor(deadline) {
    this.deadline = deadline;
    this.parts = 0;
    this.truncated = false;
  }

  /** @returns {{ text: string|null, html: string|null }} */
  walk(info, body, depth) {
    checkDeadline(this.deadline);
    if (depth > MAX_DEPTH || ++this.parts > MAX_PARTS) {
      this.truncated = true;
      return { text: null, html: null };
    }
    const type = info.type;
    if (type.startsWith('multipart/')) {
      const split = info.params.boundary ? splitMultipart(body, info.params.boundary) : null;
      if (!split) return this.leaf({ ...info, type: 'text/plain' }, body);
      const childDefault = type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      const kids = [];
      for (const p of split.parts) {
        if (this.parts > MAX_PARTS) {
          this.truncated = true;
          break;
        }
        const sp = splitHeader(p);
        kids.push(
          this.walk(entityInfo(sp.fields, childDefault), p.subarray(sp.bodyStart), depth + 1),
        );
      }
      if (type === 'multipart/alternative') {
        const html = kids.filter((k) => k.html !== null).pop();
        const text = kids.find((k) => k.text !== null && k.html === null);
        return { text: text ? text.text : null, html: html ? html.html : null };
      }
      return this.merge(kids);
    }
    if (/^message\/(?:rfc822|global|news)$/.test(type)) {
      if (info.disposition === 'attachment') return { text: null, html: null };
      const inner =
        info.cte === 'base64' || info.cte === 'quoted-printable'
          ? decodeTransfer(body, info.cte)
          : body;
      const sp = splitHeader(inner);
      return this.walk(
        entityInfo(sp.fields, 'text/plain'),
        inner.subarray(sp.bodyStart),
        depth + 1,
      );
    }
    return this.leaf(info, body);
  }

  leaf(info, body) {
    const type = info.type;
    if (info.disposition === 'attachment' || (type !== 'text/plain' && type !== 'text/html')) {
      return { text: null, html: null };
    }
    let bytes = decodeTransfer(body, info.cte);
    const max = type === 'text/html' ? MAX_HTML_CHARS : MAX_TEXT_CHARS;
    if (bytes.length > max * 4) {
      bytes = bytes.subarray(0, max * 4);
      this.truncated = true;
    }
    let s = decodeBytes(bytes, info.params.charset || sniffCharset(bytes, type));
    if (s.length > max) {
      s = s.slice(0, max);
      this.truncated = true;
    }
    if (s.indexOf('\r') !== -1) s = s.replace(/\r\n?/g, '\n');
    if (type === 'text/html') return { text: null, html: s };
    if (/^begin(?:-base64)? [0-7]{3,4} /m.test(s)) s = removeUuencoded(s);
    return { text: s, html: null };
  }

  /** Several inline parts in a row: texts joined; HTML joined, plain parts shown as <pre>. */
  merge(kids) {
    const texts = kids.filter((k) => k.text !== null).map((k) => k.text);
    const anyHtml = kids.some((k) => k.html !== null);
    const html = anyHtml
      ? kids
          .map((k) => (k.html !== null ? k.html : k.text !== null ? preOf(k.text) : ''))
          .join('\n')
      : null;
    return { text: texts.length ? texts.join('\n\n') : null, html };
  }
}

function preOf(text) {
  return '<pre>' + text.replace(/&/g, '&amp;').replace(/</g, '&lt;') + '</pre>';
}

function sniffCharset(bytes, type) {
  if (type !== 'text/html') return '';
  const head = bytes.latin1Slice(0, Math.min(bytes.length, 2048));
  const m = /<meta[^>]{0,500}charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head);
  return m ? m[1] : '';
}

function removeUuencoded(text) {
  const blocks = findUuencoded(text);
  let out = '';
  let last = 0;
  for (const b of blocks) {
    out += text.slice(last, b.start);
    last = b.end;
  }
  return out + text.slice(last);
}

/**
 * @typedef {object} MessageView
 * @property {{key: string, value: string}[]} headers every field, decoded
 * @property {string|null} subject
 * @property {import('./header').Address|null} from
 * @property {import('./header').Address[]} to
 * @property {import('./header').Address[]} cc
 * @property {Date|null} date
 * @property {string|null} messageId
 * @property {string} text the plain text (from the HTML when there is no plain part)
 * @property {string|null} html sanitised
 * @property {{part: string, contentType: string, filename: string|null, size: number,
 *   contentId: string|null}[]} attachments
 * @property {boolean} truncated some body or part was left out (over a view limit)
 * @property {string[]} warnings the parser's warnings
 */

/**
 * Builds the message view in the calling thread. Use {@link renderMessage} (./request.js)
 * from a server: it runs this off the event loop with a hard budget.
 *
 * @param {Buffer} raw
 * @param {object} [opts]
 * @param {'blocked'|'remote'} [opts.images='blocked'] remote images in the HTML
 * @param {string} [opts.attachmentUrl] URL prefix of the attachments: `cid:` references in
 *   the HTML become `attachmentUrl + part`
 * @param {number} [opts.timeBudgetMs] past it → MessageParseError 'too-complex'
 * @returns {MessageView}
 */
function buildView(raw, opts = {}) {
  const deadline = opts.timeBudgetMs > 0 ? Date.now() + opts.timeBudgetMs : Infinity;
  const { raw: buf, top } = checkMessage(raw, Infinity, true);
  const own = parseMessage(buf, {
    maxBytes: Infinity,
    maxBodyText: 1,
    timeBudgetMs: opts.timeBudgetMs,
    keepHeaders: true,
  });
  const headers = own.headers;
  const walker = new BodyWalker(deadline);
  const bodies = walker.walk(entityInfo(top.fields, 'text/plain'), buf.subarray(top.bodyStart), 0);
  const byCid = new Map();
  for (const a of own.attachments) if (a.contentId) byCid.set(a.contentId.toLowerCase(), a.part);
  const cidUrl = (ref) => {
    let id = String(ref).replace(/^\s*cid:/i, '');
    try {
      id = decodeURIComponent(id);
    } catch {
      // keep it as written
    }
    const part = byCid.get(id.trim().toLowerCase());
    return part && opts.attachmentUrl ? opts.attachmentUrl + encodeURIComponent(part) : null;
  };
  let html = null;
  if (bodies.html !== null && bodies.html !== '') {
    html = cleanText(sanitizeHtml(bodies.html, { images: opts.images, cidUrl }));
  }
  checkDeadline(deadline);
  let text = bodies.text;
  if (text === null) text = bodies.html ? htmlToText(bodies.html) : '';
  return {
    headers,
    subject: own.subject,
    from: own.from,
    to: own.to,
    cc: own.cc,
    date: own.date,
    messageId: own.messageId,
    text: cleanText(text),
    html,
    attachments: own.attachments.map((a) => ({
      part: a.part,
      contentType: a.contentType,
      filename: safeFilename(a.filename),
      size: a.size,
      contentId: a.contentId,
    })),
    truncated: walker.truncated || own.warnings.includes('too-many-parts'),
    warnings: own.warnings,
  };
}

// Bidirectional controls (LRM, RLM, ALM, the embeddings and overrides, the isolates): an
// RLO turns `invoice\u202Efdp.exe` into what reads as "invoiceexe.pdf".
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// C0, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * An attachment's file name as a client may use it (issue 29.8): the last path segment only
 * (no `../`, no folders; `/` and `\` both separate), without bidi or control characters,
 * without leading dots (`..`, hidden files), at most 255 characters. null when nothing is left.
 * @param {string|null|undefined} name the name the message declares
 * @returns {string|null}
 */
function safeFilename(name) {
  if (typeof name !== 'string') return null;
  const last = name.replace(BIDI, '').replace(CONTROLS, '').split(/[/\\]/).pop();
  const clean = last
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 255);
  return clean || null;
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
    filename: safeFilename(found.info.filename),
    content: decodeTransfer(found.body, found.info.cte),
  };
}

module.exports = { buildView, getAttachment, sanitizeHtml, safeFilename };
