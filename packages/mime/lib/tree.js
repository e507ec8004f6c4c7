'use strict';

/*
 * The MIME tree of one message as IMAP sees it (RFC 3501 6.4.5 sections, 7.4.2 ENVELOPE and
 * BODYSTRUCTURE): byte offsets into the stored raw bytes, never a re-encoding, so every
 * BODY[section] is a slice of exactly what was stored. Pure and linear: one pass over the
 * header blocks and one boundary scan per multipart; nesting depth is capped so a hostile
 * message cannot recurse without bound. Header values are kept as raw bytes (latin1 strings):
 * IMAP returns them undecoded (RFC 2047 words included).
 */

const MAX_DEPTH = 32;
const MAX_PARTS = 2000;

/**
 * @typedef {object} MimeNode
 * @property {number} start offset of the part's header
 * @property {number} headerEnd offset just after the header block (incl. its blank line)
 * @property {number} end offset just after the part's body
 * @property {Array<{key: string, line: string}>} fields raw header fields (key lower-cased, line with folding and line end)
 * @property {{type: string, subtype: string, params: Array<[string, string]>}} contentType
 * @property {MimeNode[]} children multipart children
 * @property {MimeNode|null} message the encapsulated message of a message/rfc822 part
 */

/**
 * @param {Buffer} raw
 * @returns {MimeNode}
 */
function parseTree(raw) {
  const budget = { parts: 0 };
  return parseNode(raw, 0, raw.length, null, 0, budget);
}

function parseNode(raw, start, end, parentType, depth, budget) {
  budget.parts++;
  const headerEnd = findHeaderEnd(raw, start, end);
  const fields = parseFields(raw.toString('latin1', start, headerEnd));
  const ctField = fieldValue(fields, 'content-type');
  // RFC 2046 5.1.5: parts of a multipart/digest default to message/rfc822.
  const defaultType =
    parentType === 'multipart/digest' ? 'message/rfc822' : 'text/plain; charset=us-ascii';
  const contentType = parseContentType(ctField || defaultType);
  const node = { start, headerEnd, end, fields, contentType, children: [], message: null };
  if (depth >= MAX_DEPTH || budget.parts > MAX_PARTS) return node;
  const full = `${contentType.type}/${contentType.subtype}`;
  if (contentType.type === 'multipart') {
    const boundary = param(contentType.params, 'boundary');
    if (boundary) {
      const split = splitMultipart(raw, headerEnd, end, boundary);
      node.closeEnd = split.closeEnd;
      for (const [s, e, next] of split.parts) {
        if (budget.parts > MAX_PARTS) break;
        const child = parseNode(raw, s, e, full, depth + 1, budget);
        // A part that ends with its own close delimiter line (a nested multipart, or a message
        // whose body is one) keeps that line's end: it already ended the line, so the next
        // delimiter has none of its own to take (Dovecot's reading; BODY[2] of a forwarded
        // multipart message ends `--inner--CRLF`).
        if (closeEndOf(child) === e && next > e) {
          child.end = next;
          if (child.message) child.message.end = next;
        }
        node.children.push(child);
      }
    }
  } else if (full === 'message/rfc822' || full === 'message/global') {
    node.message = parseNode(raw, headerEnd, end, null, depth + 1, budget);
  }
  return node;
}

/** Where the close delimiter line of a multipart node (or of a message's body) ends, or -1. */
function closeEndOf(node) {
  if (node.message) return closeEndOf(node.message);
  return node.closeEnd === undefined ? -1 : node.closeEnd;
}

/** Offset just after the blank line ending the header (or end when there is none). */
function findHeaderEnd(raw, start, end) {
  // A part that starts with a blank line has an empty header.
  if (raw[start] === 0x0a) return start + 1;
  if (raw[start] === 0x0d && raw[start + 1] === 0x0a) return start + 2;
  let i = start;
  while (i < end) {
    const nl = raw.indexOf(0x0a, i);
    if (nl < 0 || nl >= end) return end;
    const next = nl + 1;
    if (raw[next] === 0x0a && next < end) return next + 1;
    if (raw[next] === 0x0d && raw[next + 1] === 0x0a && next + 1 < end) return next + 2;
    i = next;
  }
  return end;
}

/** Header block text (latin1) → fields with their raw lines (folding kept). */
function parseFields(text) {
  const fields = [];
  const lines = text.split(/(?<=\n)/);
  for (const line of lines) {
    if (line === '\r\n' || line === '\n') break;
    if ((line[0] === ' ' || line[0] === '\t') && fields.length) {
      fields[fields.length - 1].line += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    fields.push({ key: line.slice(0, colon).trim().toLowerCase(), line });
  }
  return fields;
}

/** Unfolded value of the first field named key, or null. */
function fieldValue(fields, key) {
  const f = fields.find((x) => x.key === key);
  if (!f) return null;
  return f.line
    .slice(f.line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]/g, ' ')
    .replace(/\r?\n$/, '')
    .trim();
}

/** `type/subtype; a=b; c="d"` → parts, lower-cased type and param names. */
function parseContentType(value) {
  const [main, ...rest] = splitParams(value);
  const m = /^\s*([^/\s;]+)\s*\/\s*([^\s;]+)/.exec(main || '');
  const params = paramsOf(rest);
  if (!m)
    return {
      type: 'text',
      subtype: 'plain',
      params: params.length ? params : [['charset', 'us-ascii']],
    };
  return { type: m[1].toLowerCase(), subtype: m[2].toLowerCase(), params };
}

function paramsOf(list) {
  const params = [];
  for (const p of list) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    let v = p.slice(eq + 1).trim();
    if (v.startsWith('"'))
      v = v.slice(1, v.endsWith('"') && v.length > 1 ? -1 : undefined).replace(/\\(.)/g, '$1');
    params.push([p.slice(0, eq).trim().toLowerCase(), v]);
  }
  return params;
}

/** Splits on ';' outside quoted strings. */
function splitParams(value) {
  const out = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && quoted) {
      cur += c + (value[i + 1] || '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  out.push(cur);
  return out.map((s) => s.trim()).filter((s, i) => i === 0 || s);
}

function param(params, name) {
  const p = params.find(([k]) => k === name);
  return p ? p[1] : null;
}

/**
 * Body ranges of a multipart's parts (RFC 2046 5.1.1): a part runs from after its delimiter
 * line to before the line end that precedes the next delimiter (`[start, end, next]`, next:
 * where that delimiter starts); closeEnd: where the close delimiter (and its transport
 * padding) ends, or -1 without one.
 * @returns {{parts: Array<[number, number, number]>, closeEnd: number}}
 */
function splitMultipart(raw, bodyStart, end, boundary) {
  const delim = Buffer.from('--' + boundary, 'latin1');
  const parts = [];
  let closeEnd = -1;
  let partStart = -1;
  let i = bodyStart;
  while (i < end) {
    const at = raw.indexOf(delim, i);
    if (at < 0 || at + delim.length > end) break;
    const lineStart = at === bodyStart || raw[at - 1] === 0x0a;
    if (!lineStart) {
      i = at + delim.length;
      continue;
    }
    const closing = raw[at + delim.length] === 0x2d && raw[at + delim.length + 1] === 0x2d;
    if (partStart >= 0) {
      let partEnd = at;
      if (partEnd > partStart && raw[partEnd - 1] === 0x0a) partEnd--;
      if (partEnd > partStart && raw[partEnd - 1] === 0x0d) partEnd--;
      parts.push([partStart, Math.max(partStart, partEnd), at]);
    }
    const nl = raw.indexOf(0x0a, at);
    if (closing) {
      closeEnd = at + delim.length + 2;
      while (closeEnd < end && (raw[closeEnd] === 0x20 || raw[closeEnd] === 0x09)) closeEnd++;
      return { parts, closeEnd };
    }
    if (nl < 0 || nl >= end) {
      partStart = -1;
      break;
    }
    partStart = nl + 1;
    i = partStart;
  }
  // No closing delimiter: the last part runs to the end (lenient, as most servers).
  if (partStart >= 0 && partStart <= end) parts.push([partStart, end, end]);
  return { parts, closeEnd };
}

/**
 * Lines in a byte range, as BODYSTRUCTURE counts them for text and message parts: its line
 * ends, as Dovecot counts (a last line without one, e.g. before a boundary, is not counted).
 */
function countLines(raw, start, end) {
  let n = 0;
  for (let i = raw.indexOf(0x0a, start); i >= 0 && i < end; i = raw.indexOf(0x0a, i + 1)) n++;
  return n;
}

/**
 * The entity a section names (RFC 3501 6.4.5), as Dovecot resolves it, or null when there is
 * none. Each number picks a child of a multipart; on anything else only 1 is allowed (part 1
 * of a non-multipart message is its body), and only last unless the entity is message/rfc822.
 * A message/rfc822 part is entered (its encapsulated message becomes the entity) when more
 * numbers follow or the section is HEADER… or TEXT: so `BODY[1]` of a message/rfc822 part is
 * the whole encapsulated message, `[1.HEADER]`/`[1.TEXT]` its header and body, `[1.1]` its
 * first part, `[1.MIME]` the part's own MIME header.
 * @param {MimeNode} root
 * @param {number[]} path
 * @param {string} [part] the section's text part: '', 'MIME', 'HEADER', 'HEADER.FIELDS', 'TEXT'…
 * @returns {{node: MimeNode, message: boolean}|null} message: node is a message (root or
 *   entered message/rfc822), whose HEADER and TEXT exist
 */
function nodeAt(root, path, part = '') {
  let node = root;
  let message = true;
  for (let k = 0; k < path.length; k++) {
    const n = path[k];
    const last = k === path.length - 1;
    if (node.contentType.type === 'multipart') node = node.children[n - 1];
    else if (n !== 1 || (!last && !node.message)) node = null;
    if (!node) return null;
    message = false;
    if (node.message && (!last || part.startsWith('HEADER') || part === 'TEXT')) {
      node = node.message;
      message = true;
    }
  }
  return { node, message };
}

module.exports = {
  parseTree,
  parseFields,
  fieldValue,
  parseContentType,
  param,
  splitParams,
  paramsOf,
  countLines,
  nodeAt,
};
