'use strict';

/**
 * The header block of a message: bytes up to (not including) the first empty line (RFC 5322
 * section 2.1). Without an empty line the whole message is header.
 * @param {Buffer} raw
 * @returns {Buffer} a view into raw
 */
function headerBlock(raw) {
  const end = headerEndOffsets(raw);
  return end ? raw.subarray(0, end.headerEnd) : raw;
}

/**
 * @param {Buffer} raw
 * @returns {{headerEnd: number, bodyStart: number, eol: string}|null} header end (before the empty
 *   line), body start (after it) and the empty line's line ending; null when there is none
 */
function headerEndOffsets(raw) {
  let pos = 0;
  while (pos < raw.length) {
    if (raw[pos] === 0x0a) return { headerEnd: pos, bodyStart: pos + 1, eol: '\n' };
    if (raw[pos] === 0x0d && raw[pos + 1] === 0x0a) {
      return { headerEnd: pos, bodyStart: pos + 2, eol: '\r\n' };
    }
    const nl = raw.indexOf(0x0a, pos);
    if (nl < 0) return null;
    pos = nl + 1;
  }
  return null;
}

/**
 * Unfolded header fields (RFC 5322 section 2.2.3), names lower-cased, values trimmed.
 * @param {Buffer|string} header
 * @returns {Array<[string, string]>}
 */
function parseHeaderFields(header) {
  const text = Buffer.isBuffer(header) ? header.toString('latin1') : String(header);
  const out = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && out.length) {
      out[out.length - 1][1] += ' ' + line.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return out;
}

/** Split a Gmail-Takeout label list: comma-separated, labels containing commas are quoted. */
function splitLabels(value) {
  const out = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,]*))\s*(?:,|$)/g;
  let m;
  while ((m = re.exec(value)) && m[0] !== '') {
    const label = (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]).trim();
    if (label) out.push(label);
    if (re.lastIndex >= value.length) break;
  }
  return out;
}

/**
 * Flags and keywords from mbox-era status headers. Only the header block is looked at.
 * - `Status:` R → \Seen (O, "old/not recent", has no IMAP equivalent we store: ignored).
 * - `X-Status:` A → \Answered, F → \Flagged, T → \Draft, D → \Deleted (UW-IMAP/mutt/Dovecot).
 * - `X-Keywords:` comma and/or blank separated keywords (Dovecot mbox driver).
 * - `X-Mozilla-Status:` hex bit field: 0x0001 \Seen, 0x0002 \Answered, 0x0004 \Flagged,
 *   0x0008 \Deleted, 0x1000 $Forwarded.
 * - `X-Gmail-Labels:` (Takeout): "Starred" → \Flagged, "Opened"/"Read" → \Seen, "Unread" → no
 *   \Seen (wins over every other header), anything else → keyword verbatim.
 * `$Forwarded` is a keyword (RFC 5788 registry), returned in `keywords` by splitFlags().
 * @param {Buffer|string} headerBuffer header block (see headerBlock)
 * @returns {{flags: string[], keywords: string[]}} deduplicated and sorted
 */
function flagsFromHeaders(headerBuffer) {
  const flags = new Set();
  const keywords = new Map();
  const addKeyword = (k) => {
    // IMAP keywords compare case-insensitively (RFC 3501 section 2.3.2); keep the first spelling.
    if (k && !keywords.has(k.toLowerCase())) keywords.set(k.toLowerCase(), k);
  };
  let unread = false;
  for (const [name, value] of parseHeaderFields(headerBuffer)) {
    if (name === 'status') {
      if (/R/.test(value)) flags.add('\\Seen');
    } else if (name === 'x-status') {
      if (value.includes('A')) flags.add('\\Answered');
      if (value.includes('F')) flags.add('\\Flagged');
      if (value.includes('T')) flags.add('\\Draft');
      if (value.includes('D')) flags.add('\\Deleted');
    } else if (name === 'x-keywords') {
      for (const k of value.split(/[\s,]+/)) addKeyword(k);
    } else if (name === 'x-mozilla-status') {
      const bits = /^[0-9a-f]{1,8}$/i.test(value) ? parseInt(value, 16) : 0;
      if (bits & 0x0001) flags.add('\\Seen');
      if (bits & 0x0002) flags.add('\\Answered');
      if (bits & 0x0004) flags.add('\\Flagged');
      if (bits & 0x0008) flags.add('\\Deleted');
      if (bits & 0x1000) addKeyword('$Forwarded');
    } else if (name === 'x-gmail-labels') {
      for (const label of splitLabels(value)) {
        const l = label.toLowerCase();
        if (l === 'starred') flags.add('\\Flagged');
        else if (l === 'opened' || l === 'read') flags.add('\\Seen');
        else if (l === 'unread') unread = true;
        else addKeyword(label);
      }
    }
  }
  if (unread) flags.delete('\\Seen');
  return { flags: [...flags].sort(), keywords: [...keywords.values()].sort() };
}

/** The IMAP system flags (RFC 3501 2.3.2) mailgate stores in `flags`; \Recent is session state. */
const SYSTEM_FLAGS = Object.freeze(['\\Answered', '\\Deleted', '\\Draft', '\\Flagged', '\\Seen']);

/**
 * THE flag/keyword split of mailgate's data model (the store, every reader and every legacy
 * backend use this one): IMAP system flags go to `flags`, everything else — `$Forwarded`,
 * `$Junk`, `$Label1`, user keywords — to `keywords`. `\Recent` and unknown backslash atoms are
 * dropped: they are not stored state (RFC 3501 2.3.2; RFC 9051 removed \Recent). Lives at the
 * readers' floor because readers produce flags from files and cannot depend upward; the store
 * re-exports it as part of the data model.
 * @param {Iterable<string>} [list]
 * @returns {{flags: string[], keywords: string[]}} deduplicated and sorted
 */
function splitFlags(list = []) {
  const flags = new Set();
  const keywords = new Set();
  for (const f of list) {
    if (typeof f !== 'string' || f === '') continue;
    if (!f.startsWith('\\')) keywords.add(f);
    else {
      const sys = SYSTEM_FLAGS.find((s) => s.toLowerCase() === f.toLowerCase());
      if (sys) flags.add(sys);
    }
  }
  return { flags: [...flags].sort(), keywords: [...keywords].sort() };
}

module.exports = {
  headerBlock,
  headerEndOffsets,
  parseHeaderFields,
  flagsFromHeaders,
  splitFlags,
  SYSTEM_FLAGS,
};
