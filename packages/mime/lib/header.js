'use strict';

const libmime = require('libmime');
const { parseAddresses } = require('./address');
const { decodeBytes, decode8bit, cleanText } = require('./charset');
const { MessageParseError } = require('./errors');

// RFC 5322 3.6.8: field-name = 1*ftext, ftext = %d33-57 / %d59-126. RFC 5322 4.5 (obs-optional)
// allows whitespace before the colon ("Subject : x"), which old mailers produced.
const FIELD_RE = /^([!-9;-~]+)[ \t]*:/;
// RFC 5322 sets no limit on a header block; real ones are a few KB (Postfix cuts at 100 KB).
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
const HIGH_RE = /[\x80-\xff]/;

/**
 * Finds the end of the header block: the first empty line (LF or CRLF line ending).
 * Scans line by line so the cost is proportional to the header, not the message.
 *
 * @param {Buffer} buf
 * @returns {{ headerEnd: number, bodyStart: number }} headerEnd excludes the empty line;
 *   both equal buf.length when there is no separator (the whole entity is header)
 */
function findHeaderEnd(buf) {
  const len = buf.length;
  if (len === 0) return { headerEnd: 0, bodyStart: 0 };
  if (buf[0] === 10) return { headerEnd: 0, bodyStart: 1 };
  if (buf[0] === 13 && buf[1] === 10) return { headerEnd: 0, bodyStart: 2 };
  let i = buf.indexOf(10);
  while (i !== -1 && i < len - 1) {
    const n = buf[i + 1];
    if (n === 10) return { headerEnd: i + 1, bodyStart: i + 2 };
    if (n === 13 && buf[i + 2] === 10) return { headerEnd: i + 1, bodyStart: i + 3 };
    i = buf.indexOf(10, i + 1);
  }
  return { headerEnd: len, bodyStart: len };
}

/**
 * @typedef {object} HeaderField
 * @property {string} name field name as written
 * @property {string} key lowercased name
 * @property {string} value unfolded, trimmed value as a latin1 string (one char per byte)
 */

/**
 * Splits an entity (message or MIME part) into header fields and body offset.
 *
 * A line that is neither a field nor a continuation ends the header early (like Python's
 * email package, "missing header/body separator"): the rest is treated as body so its text
 * stays searchable and the header fields stay clean.
 *
 * @param {Buffer} buf
 * @returns {{ fields: HeaderField[], bodyStart: number, headerEnd: number, junk: boolean,
 *   firstLineIsField: boolean }}
 */
function splitHeader(buf) {
  const { headerEnd, bodyStart } = findHeaderEnd(buf);
  if (headerEnd > MAX_HEADER_BYTES) {
    // Its strings alone would be a large share of a parse thread's capped heap, and one
    // allocation that size can abort the whole process instead of the thread.
    throw new MessageParseError(
      'too-complex',
      `Header block of ${headerEnd} bytes, more than ${MAX_HEADER_BYTES}`,
    );
  }
  const fields = [];
  if (headerEnd === 0)
    return { fields, bodyStart, headerEnd, junk: false, firstLineIsField: false };
  const hs = buf.latin1Slice(0, headerEnd);
  let pos = 0;
  let cur = null;
  let firstLineIsField = false;
  while (pos < hs.length) {
    let nl = hs.indexOf('\n', pos);
    if (nl === -1) nl = hs.length;
    let line = hs.slice(pos, nl);
    if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
    const c = line.charCodeAt(0);
    if ((c === 32 || c === 9) && cur) {
      // RFC 5322 2.2.3 unfolding: drop the line break, keep the whitespace
      cur.value += line;
    } else {
      const m = FIELD_RE.exec(line);
      if (m) {
        if (pos === 0) firstLineIsField = true;
        cur = { name: m[1], key: m[1].toLowerCase(), value: line.slice(m[0].length) };
        fields.push(cur);
      } else if (line.length === 0 || (cur === null && (c === 32 || c === 9) && !line.trim())) {
        // stray whitespace-only line: ignore
      } else {
        for (const f of fields) f.value = f.value.trim();
        return { fields, bodyStart: pos, headerEnd: pos, junk: true, firstLineIsField };
      }
    }
    pos = nl + 1;
  }
  for (const f of fields) f.value = f.value.trim();
  return { fields, bodyStart, headerEnd, junk: false, firstLineIsField };
}

/** Converts a latin1 header string (raw bytes) to Unicode: 8-bit bytes as UTF-8 or cp1252. */
function rawToUnicode(latin1) {
  return HIGH_RE.test(latin1) ? decode8bit(Buffer.from(latin1, 'latin1')) : latin1;
}

const EW_RE = /=\?([^?\s]+)\?([QqBb])\?([^?]*)\?=/g;

function decodeQ(text) {
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5f) {
      out[n++] = 0x20; // RFC 2047 4.2 (2): "_" is space
    } else if (c === 0x3d && i + 2 < text.length && isHex(text.charCodeAt(i + 1))) {
      const h = hexVal(text.charCodeAt(i + 1));
      const l = hexVal(text.charCodeAt(i + 2));
      if (l >= 0) {
        out[n++] = (h << 4) | l;
        i += 2;
      } else {
        out[n++] = c;
      }
    } else {
      out[n++] = c & 0xff;
    }
  }
  return out.subarray(0, n);
}

function isHex(c) {
  return hexVal(c) >= 0;
}

function hexVal(c) {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/**
 * Decodes RFC 2047 encoded words anywhere in a Unicode string. Whitespace between adjacent
 * encoded words is dropped (RFC 2047 6.2); adjacent words in the same charset are joined as
 * bytes before charset decoding, because mailers split multi-byte characters across words.
 * Encoded words not separated by whitespace (illegal, but common) are decoded too.
 *
 * @param {string} s
 * @returns {string}
 */
function decodeWords(s) {
  if (s.indexOf('=?') === -1) return s;
  let out = '';
  let last = 0;
  let pendCs = null;
  let pendKey = null;
  let pend = [];
  const flush = () => {
    if (pendCs !== null) {
      out += decodeBytes(pend.length === 1 ? pend[0] : Buffer.concat(pend), pendCs);
      pendCs = null;
      pendKey = null;
      pend = [];
    }
  };
  EW_RE.lastIndex = 0;
  let m;
  while ((m = EW_RE.exec(s)) !== null) {
    const gap = s.slice(last, m.index);
    if (pendCs === null || !/^\s*$/.test(gap)) {
      flush();
      out += gap;
    }
    let cs = m[1];
    const star = cs.indexOf('*'); // RFC 2231 5: charset*language
    if (star >= 0) cs = cs.slice(0, star);
    const bytes =
      m[2] === 'B' || m[2] === 'b'
        ? Buffer.from(m[3].replace(/=+(?=[^=])/g, ''), 'base64')
        : decodeQ(m[3]);
    const key = cs.toLowerCase();
    if (pendKey !== key) {
      flush();
      pendCs = cs;
      pendKey = key;
    }
    pend.push(bytes);
    last = m.index + m[0].length;
  }
  flush();
  return out + s.slice(last);
}

/**
 * Decodes a header value for display and search: 8-bit bytes (UTF-8 if valid, else
 * windows-1252), then RFC 2047 encoded words. NUL removed.
 *
 * @param {Buffer|string} value raw header value (a Buffer of bytes, or an already-Unicode string)
 * @returns {string}
 */
function decodeHeaderValue(value) {
  if (value == null) return '';
  const s = Buffer.isBuffer(value) ? decode8bit(value) : String(value);
  return cleanText(decodeWords(s.replace(/\r?\n(?=[ \t])/g, '')));
}

/**
 * @typedef {object} Address
 * @property {string} name display name, RFC 2047 decoded ('' if none)
 * @property {string} address addr-spec ('' if none)
 */

function pushAddress(out, a) {
  const name = cleanText(decodeWords(a.name || '').trim());
  let address = cleanText((a.address || '').trim());
  if (!address && name && !/\s/.test(name)) {
    // a bare word ("To: postmaster") is a local address, not a display name
    out.push({ name: '', address: name });
  } else if (address || name) {
    out.push({ name, address });
  }
}

/**
 * Parses an address list (From/To/Cc...) in one linear pass (./address.js). Groups
 * (RFC 5322 3.4, "undisclosed-recipients:;") are flattened into their members. Names are
 * RFC 2047 decoded after parsing, so an encoded comma cannot split an address.
 *
 * @param {string} value Unicode header value (not yet RFC 2047 decoded)
 * @returns {Address[]}
 */
function parseAddressList(value) {
  return parseAddressListWithGroups(value).list;
}

/** @returns {{ list: Address[], text: string }} */
function parseAddressListWithGroups(value) {
  const list = [];
  const parts = [];
  if (!value) return { list, text: '' };
  for (const a of parseAddresses(value)) {
    if (Array.isArray(a.group)) {
      const members = [];
      for (const g of a.group) pushAddress(members, g);
      for (const m of members) list.push(m);
      const gname = cleanText(decodeWords(a.name || '').trim());
      parts.push(`${gname}: ${members.map(formatAddress).join(', ')};`);
    } else {
      const before = list.length;
      pushAddress(list, a);
      if (list.length > before) parts.push(formatAddress(list[before]));
    }
  }
  return { list, text: parts.join(', ') };
}

/**
 * @param {Address} a
 * @returns {string} 'Name <addr>' or 'addr'
 */
function formatAddress(a) {
  if (a.name && a.address) return `${a.name} <${a.address}>`;
  return a.address || a.name;
}

const MONTHS = {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
};
// RFC 5322 4.3 obs-zone, plus a few zone names seen in real mail. Military letters are
// "-0000" (unknown) per RFC 5322 4.3, i.e. UTC.
const ZONES = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
  cet: 60,
  cest: 120,
  met: 60,
  mest: 120,
  bst: 60,
  eet: 120,
  eest: 180,
  wet: 0,
  west: 60,
  jst: 540,
  kst: 540,
  hkt: 480,
  aest: 600,
  aedt: 660,
  nzst: 720,
  nzdt: 780,
};
const DATE_RE =
  /^\s*(?:[A-Za-z]+\.?\s*,?\s*)?(\d{1,2})[\s-]+([A-Za-z]{3})[A-Za-z]*\.?[\s-]+(\d{2,4})\s+(\d{1,2})[:.](\d{1,2})(?:[:.](\d{1,2})(?:\.\d+)?)?\s*([AaPp]\.?[Mm]\.?)?\s*(?:([+-])(\d{1,2}):?(\d{2})|([A-Za-z]+))?/;
const CTIME_RE =
  /^\s*[A-Za-z]{3},?\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s+(?:([A-Za-z]+)\s+)?(\d{4})/;
const MAX_DATE_CHARS = 256;
const MAX_STRUCTURED_CHARS = 64 * 1024;
const DIM = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function build(y, mo, d, h, mi, s, offsetMin) {
  if (mo === undefined || d < 1 || d > DIM[mo] || h > 23 || mi > 59 || s > 60) return null;
  if (mo === 1 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return null;
  const t = Date.UTC(y, mo, d, h, mi, Math.min(s, 59)) - offsetMin * 60000;
  const date = new Date(t);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Parses an RFC 5322 date (with obsolete forms: 2-digit years, named zones, comments),
 * ctime-style dates, and as a last resort anything Date.parse accepts that has a 4-digit
 * year. Returns null for missing or invalid dates (e.g. 31 Feb).
 *
 * @param {string} value
 * @returns {Date|null}
 */
function parseDate(value) {
  if (!value) return null;
  // A real date is ~40 characters; the fallback below has a regex that is quadratic on a
  // flood of "(" (a hostile 1 MB Date header), so look at a bounded prefix only.
  if (value.length > MAX_DATE_CHARS) value = value.slice(0, MAX_DATE_CHARS);
  let m = DATE_RE.exec(value);
  if (m) {
    let y = Number(m[3]);
    // RFC 5322 4.3 obs-year: 2 digits → 19xx for 50-99, 20xx for 00-49; 3 digits → +1900
    if (m[3].length === 2) y += y < 50 ? 2000 : 1900;
    else if (m[3].length === 3) y += 1900;
    let off = 0;
    if (m[8]) {
      const oh = Number(m[9]);
      const om = Number(m[10]);
      if (om > 59) return null;
      off = (oh * 60 + om) * (m[8] === '-' ? -1 : 1);
    } else if (m[11]) {
      off = ZONES[m[11].toLowerCase()] || 0;
    }
    let hour = Number(m[4]);
    if (m[7]) {
      // "10:05:15 PM": not RFC 5322, but some bulk mailers wrote it
      if (hour < 1 || hour > 12) return null;
      hour = (hour % 12) + (/^p/i.test(m[7]) ? 12 : 0);
    }
    return build(
      y,
      MONTHS[m[2].toLowerCase()],
      Number(m[1]),
      hour,
      Number(m[5]),
      Number(m[6] || 0),
      off,
    );
  }
  m = CTIME_RE.exec(value);
  if (m) {
    const off = (m[6] && ZONES[m[6].toLowerCase()]) || 0;
    return build(
      Number(m[7]),
      MONTHS[m[1].toLowerCase()],
      Number(m[2]),
      Number(m[3]),
      Number(m[4]),
      Number(m[5] || 0),
      off,
    );
  }
  // V8's legacy Date.parse accepts nonsense like "1" (→ 2001); require a 4-digit year.
  if (!/\d{4}/.test(value)) return null;
  const t = Date.parse(value.replace(/\([^)]*\)/g, ' '));
  return Number.isNaN(t) ? null : new Date(t);
}

/**
 * Extracts message ids (RFC 5322 3.6.4) without angle brackets.
 *
 * @param {string} value
 * @returns {string[]}
 */
function parseMessageIds(value) {
  if (!value) return [];
  const ids = [];
  const re = /<([^<>]*)>/g;
  let m;
  while ((m = re.exec(value)) !== null) {
    const id = m[1].replace(/\s+/g, '');
    if (id) ids.push(id);
  }
  if (ids.length === 0) {
    // no brackets (broken mailers): whitespace-separated tokens that look like ids
    for (const t of value.split(/[\s,]+/)) if (t.includes('@')) ids.push(t);
  }
  return ids;
}

/**
 * Parses a Content-Type / Content-Disposition value with libmime (RFC 2045 parameters,
 * RFC 2231 continuations and charsets). Parameter values that carry RFC 2047 encoded words
 * (illegal, but what Outlook and others send for filenames) are decoded too.
 *
 * @param {string} value Unicode header value
 * @returns {{ value: string, params: Object<string,string> }}
 */
function parseStructured(value) {
  let r;
  // Real Content-Type/-Disposition values, RFC 2231 continuations included, are far below
  // this; libmime needs ~0.4 s for a 1 MB one, and a message has one per part.
  if (value && value.length > MAX_STRUCTURED_CHARS) value = value.slice(0, MAX_STRUCTURED_CHARS);
  try {
    r = libmime.parseHeaderValue(value || '');
  } catch {
    r = { value: '', params: {} };
  }
  const params = {};
  for (const k of Object.keys(r.params)) {
    const v = r.params[k];
    params[k] = typeof v === 'string' ? cleanText(decodeWords(v)) : '';
  }
  return { value: String(r.value || '').toLowerCase(), params };
}

module.exports = {
  MAX_HEADER_BYTES,
  findHeaderEnd,
  splitHeader,
  rawToUnicode,
  decodeWords,
  decodeHeaderValue,
  parseAddressList,
  parseAddressListWithGroups,
  formatAddress,
  parseDate,
  parseMessageIds,
  parseStructured,
};
