'use strict';

/**
 * Quoted-printable decoding (RFC 2045 6.7) straight from bytes. Lenient like real mail
 * readers: a malformed "=" sequence is kept literally; "=" before the line end is a soft
 * line break (with or without trailing whitespace); works for CRLF and LF.
 *
 * @param {Buffer} buf
 * @returns {Buffer}
 */
function decodeQP(buf) {
  const len = buf.length;
  const out = Buffer.allocUnsafe(len);
  let n = 0;
  for (let i = 0; i < len; i++) {
    const c = buf[i];
    if (c !== 0x3d) {
      out[n++] = c;
      continue;
    }
    const h = hexVal(buf[i + 1]);
    const l = h >= 0 ? hexVal(buf[i + 2]) : -1;
    if (l >= 0) {
      out[n++] = (h << 4) | l;
      i += 2;
      continue;
    }
    // soft line break: "=" [WSP...] (CRLF | LF)
    let j = i + 1;
    while (j < len && (buf[j] === 32 || buf[j] === 9)) j++;
    if (j < len && buf[j] === 13 && buf[j + 1] === 10) {
      i = j + 1;
    } else if (j < len && buf[j] === 10) {
      i = j;
    } else if (j >= len) {
      i = j;
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}

function hexVal(c) {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

const B64_CHUNK = 4 << 20; // a multiple of 4

function isB64(c) {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 43 ||
    c === 47 ||
    c === 45 ||
    c === 95
  );
}

/**
 * Base64 (RFC 2045 6.8), lenient like mail readers: characters outside the alphabet are
 * skipped and decoding stops at "=" padding. Decoded in 4 MB slices so that a huge part never
 * becomes one huge string on the (capped) heap of a parse thread.
 *
 * @param {Buffer} buf
 * @returns {Buffer}
 */
function decodeBase64(buf) {
  if (buf.length <= B64_CHUNK) return Buffer.from(buf.latin1Slice(0, buf.length), 'base64');
  const clean = Buffer.allocUnsafe(buf.length);
  let n = 0;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (isB64(c)) clean[n++] = c;
    else if (c === 61) break; // "=": padding, the end of the data
  }
  const out = [];
  for (let i = 0; i < n; i += B64_CHUNK) {
    out.push(Buffer.from(clean.latin1Slice(i, Math.min(n, i + B64_CHUNK)), 'base64'));
  }
  return Buffer.concat(out);
}

/**
 * Decoded length of base64 data without decoding it (attachment sizes on huge messages).
 *
 * @param {Buffer} buf
 * @returns {number}
 */
function base64Size(buf) {
  let n = 0;
  for (let i = 0; i < buf.length; i++) if (isB64(buf[i])) n++;
  return Math.floor((n * 3) / 4);
}

/**
 * Decodes the Content-Transfer-Encoding. Unknown encodings (7bit, 8bit, binary, x-token) are
 * returned as is, per RFC 2045 6.4. uuencode ("x-uuencode") bodies are decoded too.
 *
 * @param {Buffer} buf
 * @param {string} cte lowercased Content-Transfer-Encoding
 * @returns {Buffer}
 */
function decodeTransfer(buf, cte) {
  if (cte === 'quoted-printable') return decodeQP(buf);
  if (cte === 'base64') return decodeBase64(buf);
  if (/^(?:x-)?uu(?:encode|e)?$/.test(cte)) {
    const u = findUuencoded(buf.latin1Slice(0, buf.length));
    if (u.length) return u[0].decode();
  }
  return buf;
}

/**
 * Finds uuencoded blocks ("begin 644 name" ... "end") in text.
 *
 * @param {string} text
 * @returns {{ start: number, end: number, filename: string, size: number, decode: () => Buffer }[]}
 */
function findUuencoded(text) {
  const blocks = [];
  const re = /^begin(?:-base64)? +([0-7]{3,4}) +([^\r\n]+)\r?$/gm;
  let m;
  while ((m = re.exec(text)) !== null) {
    const bodyStart = m.index + m[0].length + 1;
    const endRe = /^end\r?$/gm;
    endRe.lastIndex = bodyStart;
    const e = endRe.exec(text);
    const end = e ? e.index + e[0].length : text.length;
    const data = text.slice(bodyStart, e ? e.index : text.length);
    const decode = () => uudecode(data);
    blocks.push({ start: m.index, end, filename: m[2].trim(), size: uuSize(data), decode });
    re.lastIndex = end;
  }
  return blocks;
}

function uuSize(data) {
  let n = 0;
  for (const line of data.split('\n')) {
    if (!line) continue;
    const len = (line.charCodeAt(0) - 32) & 63;
    if (len === 0) break;
    n += len;
  }
  return n;
}

function uudecode(data) {
  const out = [];
  for (const line of data.split('\n')) {
    if (!line) continue;
    const len = (line.charCodeAt(0) - 32) & 63;
    if (len === 0) break;
    const bytes = [];
    for (let i = 1; i < line.length && bytes.length < len; i += 4) {
      const a = (line.charCodeAt(i) - 32) & 63;
      const b = (line.charCodeAt(i + 1) - 32) & 63;
      const c = (line.charCodeAt(i + 2) - 32) & 63;
      const d = (line.charCodeAt(i + 3) - 32) & 63;
      bytes.push(((a << 2) | (b >> 4)) & 255, ((b << 4) | (c >> 2)) & 255, ((c << 6) | d) & 255);
    }
    out.push(Buffer.from(bytes.slice(0, len)));
  }
  return Buffer.concat(out);
}

// A compact entity table: the named entities that actually occur in mail HTML. Anything else
// stays as written (still searchable as text).
const ENTITIES = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  sbquo: '‚',
  bdquo: '„',
  laquo: '«',
  raquo: '»',
  bull: '•',
  middot: '·',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  para: '¶',
  deg: '°',
  plusmn: '±',
  times: '×',
  divide: '÷',
  frac12: '½',
  frac14: '¼',
  frac34: '¾',
  iexcl: '¡',
  iquest: '¿',
  shy: '',
  zwnj: '',
  zwj: '',
  thinsp: ' ',
  ensp: ' ',
  emsp: ' ',
  agrave: 'à',
  aacute: 'á',
  acirc: 'â',
  atilde: 'ã',
  auml: 'ä',
  aring: 'å',
  aelig: 'æ',
  ccedil: 'ç',
  egrave: 'è',
  eacute: 'é',
  ecirc: 'ê',
  euml: 'ë',
  igrave: 'ì',
  iacute: 'í',
  icirc: 'î',
  iuml: 'ï',
  ntilde: 'ñ',
  ograve: 'ò',
  oacute: 'ó',
  ocirc: 'ô',
  otilde: 'õ',
  ouml: 'ö',
  oslash: 'ø',
  ugrave: 'ù',
  uacute: 'ú',
  ucirc: 'û',
  uuml: 'ü',
  yacute: 'ý',
  yuml: 'ÿ',
  szlig: 'ß',
  Agrave: 'À',
  Aacute: 'Á',
  Acirc: 'Â',
  Atilde: 'Ã',
  Auml: 'Ä',
  Aring: 'Å',
  AElig: 'Æ',
  Ccedil: 'Ç',
  Egrave: 'È',
  Eacute: 'É',
  Ecirc: 'Ê',
  Euml: 'Ë',
  Igrave: 'Ì',
  Iacute: 'Í',
  Icirc: 'Î',
  Iuml: 'Ï',
  Ntilde: 'Ñ',
  Ograve: 'Ò',
  Oacute: 'Ó',
  Ocirc: 'Ô',
  Otilde: 'Õ',
  Ouml: 'Ö',
  Oslash: 'Ø',
  Ugrave: 'Ù',
  Uacute: 'Ú',
  Ucirc: 'Û',
  Uuml: 'Ü',
  Yacute: 'Ý',
};

/**
 * Decodes HTML character references (named from a small table, decimal, hex). The ';' is
 * optional, as in browsers' legacy handling.
 *
 * @param {string} s
 * @returns {string}
 */
function decodeEntities(s) {
  if (s.indexOf('&') === -1) return s;
  return s.replace(
    /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{1,7}));?/g,
    (m, d, x, n) => {
      if (n !== undefined) {
        const v = ENTITIES[n] ?? ENTITIES[n.toLowerCase()];
        return v === undefined ? m : v;
      }
      const cp = d !== undefined ? Number(d) : parseInt(x, 16);
      if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return '\uFFFD';
      return String.fromCodePoint(cp);
    },
  );
}

const BLOCK_TAGS = new Set(
  (
    'br p div tr li ul ol h1 h2 h3 h4 h5 h6 table hr blockquote pre title dd dt dl section ' +
    'article header footer'
  ).split(' '),
);
const CELL_TAGS = new Set(['td', 'th']);
const RAW_TEXT = new Set(['script', 'style', 'noscript', 'template', 'xml']);
const TAG_NAME = /[A-Za-z][A-Za-z0-9]*/y;

/**
 * Strips markup in one forward scan: each "<" is looked at once and each tag ends at the
 * next ">" (found with indexOf). Regexes like `<[A-Za-z][^>]*>` restart at every "<" and
 * scan to the end of the input when no ">" follows: quadratic on `<a` floods (issue 17.3).
 * Once no ">" is left, nothing after it can be a tag, so the rest is text.
 *
 * @param {string} html
 * @param {(name: string, closing: boolean) => string} replace what a tag becomes
 * @param {Set<string>} dropWithContent elements whose content is dropped too
 * @returns {string}
 */
function stripTags(html, replace, dropWithContent) {
  const out = [];
  let i = 0;
  const len = html.length;
  let noMoreGt = false;
  while (i < len) {
    const lt = html.indexOf('<', i);
    if (lt === -1 || noMoreGt) break;
    out.push(html.slice(i, lt));
    const c = html.charCodeAt(lt + 1);
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      out.push(' ');
      i = end === -1 ? len : end + 3;
      continue;
    }
    if (html.startsWith('<![CDATA[', lt)) {
      out.push(' ');
      i = lt + 9;
      continue;
    }
    const closing = c === 47; // '/'
    TAG_NAME.lastIndex = lt + (closing ? 2 : 1);
    const m = c === 33 || c === 63 ? null : TAG_NAME.exec(html); // '<!' '<?'
    if (!m && c !== 33 && c !== 63) {
      out.push('<'); // not markup: a literal "<"
      i = lt + 1;
      continue;
    }
    const gt = html.indexOf('>', lt + 1);
    if (gt === -1) {
      noMoreGt = true;
      i = lt;
      break;
    }
    i = gt + 1;
    if (!m) {
      out.push(' '); // <!doctype>, <?xml?>
      continue;
    }
    const name = m[0].toLowerCase();
    if (!closing && dropWithContent.has(name)) {
      // raw text up to the matching end tag (or the end of the input, as browsers do)
      const re = new RegExp(`</${name}\\s*>`, 'gi');
      re.lastIndex = i;
      const e = re.exec(html);
      i = e ? e.index + e[0].length : len;
      out.push(' ');
      continue;
    }
    out.push(replace(name, closing));
  }
  if (i < len) out.push(html.slice(i));
  return out.join('');
}

function textTagReplacement(name) {
  if (BLOCK_TAGS.has(name)) return '\n';
  if (CELL_TAGS.has(name)) return ' ';
  return '';
}

/**
 * HTML → plain text for search: drops comments, <script>, <style> and similar raw-text
 * elements, turns block elements into line breaks, strips the remaining tags and decodes
 * entities. A linear scan, not a DOM: fast and good enough for indexing (not for display).
 *
 * @param {string} html
 * @returns {string}
 */
function htmlToText(html) {
  let s = stripTags(html.replace(/\]\]>/g, ' '), textTagReplacement, RAW_TEXT);
  s = decodeEntities(s);
  return s
    .replace(/[ \t\r\f\v\u00a0]+/g, ' ')
    .replace(/ ?\n[ \n]*/g, (m) => (m.split('\n').length > 2 ? '\n\n' : '\n'))
    .trim();
}

const ENRICHED_PARAM = new Set(['param']);

/**
 * text/enriched and text/richtext (RFC 1896): tags stripped, "<<" is a literal "<".
 *
 * @param {string} s
 * @returns {string}
 */
function enrichedToText(s) {
  // "<<" first, so that the scan does not read it as the start of a tag
  const parts = s.split('<<');
  return parts.map((p) => stripTags(p, () => '', ENRICHED_PARAM)).join('<');
}

module.exports = {
  decodeQP,
  decodeBase64,
  base64Size,
  decodeTransfer,
  findUuencoded,
  decodeEntities,
  htmlToText,
  enrichedToText,
};
