'use strict';

const { MessageParseError } = require('./errors');
const { decodeBytes, cleanText, resolveCharset } = require('./charset');
const {
  splitHeader,
  rawToUnicode,
  decodeWords,
  parseAddressListWithGroups,
  parseDate,
  parseMessageIds,
  parseStructured,
} = require('./header');
const {
  decodeQP,
  base64Size,
  decodeTransfer,
  findUuencoded,
  htmlToText,
  enrichedToText,
} = require('./body');
const { addressSearchText } = require('./address-list');

const DEFAULT_MAX_BYTES = 100 * 1024 * 1024;
const DEFAULT_MAX_BODY_TEXT = 2000000;
const MAX_DEPTH = 50;
const MAX_PARTS = 10000;
const SNIFF_BYTES = 4096;
const HTML_CHUNK = 1 << 20;
// Content-Transfer-Encoding names for uuencode in the wild (not registered, RFC 2045 6.3)
const UUENCODE_CTE = /^(?:x-)?uu(?:encode|e)?$/;
const LOOKS_HTML = /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b/i;

/**
 * @typedef {import('./header').Address} Address
 *
 * @typedef {object} AttachmentInfo
 * @property {string} part IMAP BODY[] section number ('1', '2.1'); uuencoded blocks inside a
 *   text part get '<part>.uu<n>' (no IMAP number exists for them)
 * @property {string} contentType lowercased type/subtype
 * @property {string|null} filename
 * @property {number} size decoded size in bytes
 * @property {string|null} disposition 'attachment' | 'inline' | null (or 'uuencode')
 * @property {string|null} contentId Content-ID without angle brackets
 *
 * @typedef {object} ParsedMessage
 * @property {string|null} subject
 * @property {Date|null} date
 * @property {string|null} messageId
 * @property {string|null} inReplyTo
 * @property {string[]} references
 * @property {Address|null} from
 * @property {Address[]} to
 * @property {Address[]} cc
 * @property {Address[]} bcc
 * @property {Address[]} replyTo
 * @property {string} fromText
 * @property {string} toText
 * @property {string} ccText
 * @property {string} headerText
 * @property {string} bodyText the text shown: the best alternative, no attachments
 * @property {string} searchBodyText what SEARCH BODY reads: every text part's decoded text
 * @property {string} partHeaderText the header fields of every part below the top (TEXT)
 * @property {boolean} hasAttachments
 * @property {AttachmentInfo[]} attachments
 * @property {string} contentType
 * @property {number} size
 * @property {string[]} warnings
 */

/** Control bytes that make a sample look binary: C0 except TAB, LF, FF, CR and ESC, plus DEL. */
function looksBinary(raw) {
  const n = Math.min(raw.length, SNIFF_BYTES);
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const c = raw[i];
    // ESC is allowed: ISO-2022-JP text is 7-bit with escape sequences (RFC 1468)
    if ((c < 32 && c !== 9 && c !== 10 && c !== 12 && c !== 13 && c !== 27) || c === 127) bad++;
  }
  return bad > n * 0.1;
}

function firstNonSpace(raw) {
  const n = Math.min(raw.length, SNIFF_BYTES);
  for (let i = 0; i < n; i++) {
    const c = raw[i];
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) return i;
  }
  return n < raw.length ? n : -1;
}

/**
 * type "/" subtype of printable ASCII (RFC 2045 5.1), checked without a backtracking regex
 * (`^[!-~]+\/[!-~]+$` is quadratic on a long value with many "/").
 */
function isMediaType(v) {
  const slash = v.indexOf('/');
  if (slash <= 0 || slash === v.length - 1 || v.length > 255) return false;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 33 || c > 126) return false;
  }
  return true;
}

/** Header-derived facts of one MIME entity. */
function entityInfo(fields, defaultType) {
  let ct = null;
  let cte = null;
  let cd = null;
  let cid = null;
  for (const f of fields) {
    switch (f.key) {
      case 'content-type':
        if (ct === null) ct = f.value;
        break;
      case 'content-transfer-encoding':
        if (cte === null) cte = f.value;
        break;
      case 'content-disposition':
        if (cd === null) cd = f.value;
        break;
      case 'content-id':
        if (cid === null) cid = f.value;
        break;
    }
  }
  let type = defaultType;
  let params = {};
  if (ct !== null) {
    const p = parseStructured(rawToUnicode(ct));
    params = p.params;
    // RFC 2045 5.2: a syntactically invalid Content-Type means text/plain
    type = isMediaType(p.value) ? p.value : 'text/plain';
  }
  let disposition = null;
  let dparams = {};
  if (cd !== null) {
    const p = parseStructured(rawToUnicode(cd));
    disposition = p.value || null;
    dparams = p.params;
  }
  const filename = dparams.filename || params.name || null;
  return {
    type,
    params,
    cte: cte === null ? '' : cte.trim().toLowerCase(),
    disposition,
    filename: filename ? filename.trim() || null : null,
    contentId: cid ? cleanText(rawToUnicode(cid).replace(/^\s*<|>\s*$/g, '')) || null : null,
  };
}

/**
 * Splits a multipart body at its boundary (RFC 2046 5.1.1). A delimiter is "--boundary" at the
 * start of a line followed by optional whitespace; the line break before it belongs to the
 * delimiter. Returns null when no delimiter exists at all.
 *
 * @param {Buffer} body
 * @param {string} boundary
 * @returns {{ parts: Buffer[], closed: boolean } | null}
 */
function splitMultipart(body, boundary) {
  const delim = Buffer.from('--' + boundary, 'latin1');
  const dl = delim.length;
  const len = body.length;
  const parts = [];
  let partStart = -1;
  let from = 0;
  while (from < len) {
    const idx = body.indexOf(delim, from);
    if (idx === -1) break;
    from = idx + dl;
    if (idx > 0 && body[idx - 1] !== 10) continue;
    let p = idx + dl;
    let close = false;
    if (body[p] === 45 && body[p + 1] === 45) {
      close = true;
      p += 2;
    }
    while (p < len && (body[p] === 32 || body[p] === 9)) p++;
    if (p < len && body[p] !== 10 && !(body[p] === 13 && body[p + 1] === 10)) {
      // "--boundaryXYZ": a longer boundary of a nested part, not ours. A close delimiter
      // followed by junk is still a close (seen in the wild).
      if (!close) continue;
    }
    if (partStart >= 0) {
      let end = idx > 0 ? idx - 1 : 0;
      if (end > partStart && body[end - 1] === 13) end--;
      parts.push(body.subarray(partStart, Math.max(partStart, end)));
    }
    if (close) return { parts, closed: true };
    const nl = body.indexOf(10, p);
    partStart = nl === -1 ? len : nl + 1;
    from = partStart;
  }
  if (partStart < 0) return null;
  parts.push(body.subarray(partStart));
  return { parts, closed: false };
}

/** Charset declared by an HTML <meta> tag, for text/html parts without a charset parameter. */
function sniffHtmlCharset(bytes) {
  const head = bytes.latin1Slice(0, Math.min(bytes.length, 2048));
  const m = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(head);
  return m ? m[1] : '';
}

class Walker {
  constructor(opts) {
    this.deadline = opts.deadline;
    this.maxBodyText = opts.maxBodyText;
    this.budget = opts.maxBodyText;
    this.attachments = [];
    this.warnings = [];
    this.parts = 0;
    // What SEARCH BODY and TEXT read (RFC 3501 6.4.4, as Dovecot): the decoded text of every
    // text/* and message/* leaf, attachments and every alternative included, without the
    // headers of encapsulated messages; and the header fields of every part below the top.
    this.searchTexts = [];
    this.searchBudget = opts.maxBodyText;
    this.partHeaders = [];
  }

  warn(code) {
    if (!this.warnings.includes(code)) this.warnings.push(code);
  }

  /**
   * Walks one entity. `num` is the IMAP section number of this entity; a message root (the
   * top-level message or one encapsulated in message/rfc822) numbers its single body part
   * num + '.1' (or '1' at the top), its multipart children num + '.N' (RFC 3501 6.4.5).
   *
   * @returns {{ text: string, kind: string }}
   */
  walk(fields, body, num, isRoot, depth, defaultType) {
    checkDeadline(this.deadline);
    if (depth > MAX_DEPTH) {
      this.warn('max-depth');
      return { text: '', kind: 'other' };
    }
    if (++this.parts > MAX_PARTS) {
      this.warn('too-many-parts');
      return { text: '', kind: 'other' };
    }
    const info = entityInfo(fields, defaultType);
    if (depth > 0) this.notePartHeader(fields);
    const leafNum = isRoot ? (num ? num + '.1' : '1') : num;
    const type = info.type;

    if (type.startsWith('multipart/')) {
      const boundary = info.params.boundary;
      const split = boundary ? splitMultipart(body, boundary) : null;
      if (!split) {
        this.warn(boundary ? 'multipart-boundary-not-found' : 'multipart-without-boundary');
        return this.leaf({ ...info, type: 'text/plain' }, body, leafNum);
      }
      if (!split.closed) this.warn('multipart-unterminated');
      const childDefault = type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      const alternative = type === 'multipart/alternative';
      const budgetBefore = this.budget;
      const results = [];
      for (let i = 0; i < split.parts.length; i++) {
        const part = split.parts[i];
        const sp = splitHeader(part);
        if (alternative) this.budget = budgetBefore; // discarded alternatives must not eat budget
        const childNum = num ? `${num}.${i + 1}` : String(i + 1);
        results.push(
          this.walk(
            sp.fields,
            part.subarray(sp.bodyStart),
            childNum,
            false,
            depth + 1,
            childDefault,
          ),
        );
        if (this.parts > MAX_PARTS) break;
      }
      if (alternative) {
        // RFC 2046 5.1.4: alternatives are in increasing faithfulness; for search the plain
        // one is best, unless it is empty (some mailers send an empty text/plain)
        let pick = results.find((r) => r.kind === 'plain' && /\S/.test(r.text));
        if (!pick) pick = [...results].reverse().find((r) => /\S/.test(r.text));
        this.budget = budgetBefore - (pick ? pick.text.length : 0);
        return pick || { text: '', kind: 'other' };
      }
      const texts = results.filter((r) => r.text).map((r) => r.text);
      const kind = results.some((r) => r.kind === 'plain')
        ? 'plain'
        : results.some((r) => r.kind === 'html')
          ? 'html'
          : 'other';
      return { text: texts.join('\n\n'), kind };
    }

    if (type === 'message/rfc822' || type === 'message/global' || type === 'message/news') {
      if (info.disposition === 'attachment' || info.filename) {
        this.addAttachment(info, body, leafNum);
      }
      // 7bit/8bit/binary only per RFC 2046 5.2.1, but base64/QP-encoded messages exist
      const inner =
        info.cte === 'base64' || info.cte === 'quoted-printable'
          ? decodeTransfer(body, info.cte)
          : body;
      const sp = splitHeader(inner);
      if (sp.fields.length === 0) {
        this.warn('rfc822-without-header');
        return this.leaf({ ...info, type: 'text/plain', disposition: null }, inner, leafNum);
      }
      const summary = this.summary(sp.fields);
      const r = this.walk(
        sp.fields,
        inner.subarray(sp.bodyStart),
        leafNum,
        true,
        depth + 1,
        'text/plain',
      );
      return { text: r.text ? summary + '\n\n' + r.text : summary, kind: r.kind };
    }

    return this.leaf(info, body, leafNum);
  }

  /** Forwarded-message header lines, so a nested message's subject and sender are searchable. */
  summary(fields) {
    const lines = [];
    for (const f of fields) {
      if (/^(?:from|to|cc|date|subject)$/.test(f.key)) {
        lines.push(`${f.name}: ${cleanText(decodeWords(rawToUnicode(f.value)))}`);
      }
    }
    if (this.budget > 0) this.budget -= lines.join('\n').length;
    return lines.join('\n');
  }

  addAttachment(info, body, part) {
    let size;
    if (info.cte === 'base64') size = base64Size(body);
    else if (info.cte === 'quoted-printable') size = decodeQP(body).length;
    else if (UUENCODE_CTE.test(info.cte)) size = decodeTransfer(body, info.cte).length;
    else size = body.length;
    this.attachments.push({
      part,
      contentType: info.type,
      filename: info.filename,
      size,
      disposition: info.disposition,
      contentId: info.contentId,
    });
  }

  leaf(info, body, part) {
    const type = info.type;
    const isText =
      type.startsWith('text/') ||
      type === 'message/delivery-status' ||
      type === 'message/disposition-notification' ||
      type === 'message/feedback-report';
    const isAttachment =
      info.disposition === 'attachment' ||
      info.filename !== null ||
      (!type.startsWith('text/') && !type.startsWith('message/'));
    if (isAttachment) this.addAttachment(info, body, part);
    const isSearched = isText || type.startsWith('message/');
    const kind = type === 'text/html' ? 'html' : 'plain';
    if (!isText || info.disposition === 'attachment') {
      // Not shown as the body, but a text attachment (a patch on a list) is still searched.
      if (isSearched) this.searchTexts.push(this.searchOnlyText(info, body, part, kind));
      return { text: '', kind: 'other' };
    }
    const text = this.decodeText(info, body, part, kind);
    this.searchTexts.push(text);
    return { text, kind };
  }

  /** Decoded text of a part that is searched but not shown, drawn from its own budget. */
  searchOnlyText(info, body, part, kind) {
    const shown = this.budget;
    const attachments = this.attachments.length;
    this.budget = this.searchBudget;
    const text = this.decodeText(info, body, part, kind);
    this.searchBudget = this.budget;
    this.budget = shown;
    // A uuencoded block inside it is listed once, by the shown path only.
    this.attachments.length = attachments;
    return text;
  }

  /** A part's header fields, decoded, for TEXT (which covers every header of the message). */
  notePartHeader(fields) {
    let text = '';
    for (const f of fields)
      text += f.name + ': ' + cleanText(decodeWords(rawToUnicode(f.value))) + '\n';
    if (this.searchBudget > 0) {
      this.searchBudget -= text.length;
      this.partHeaders.push(text);
    }
  }

  decodeText(info, body, part, kind) {
    if (this.budget <= 0) {
      this.warn('body-text-truncated');
      return '';
    }
    let bytes = decodeTransfer(body, info.cte);
    // Bound the work on huge parts: a UTF-16 unit needs at most 4 bytes; HTML markup is
    // mostly discarded, so allow more raw bytes for it.
    const maxBytes = this.budget * (kind === 'html' ? 16 : 4);
    if (bytes.length > maxBytes) bytes = bytes.subarray(0, maxBytes);
    let charset = info.params.charset || '';
    if (!charset && kind === 'html') charset = sniffHtmlCharset(bytes);
    if (charset && resolveCharset(charset) === 'unknown' && !/^unknown/i.test(charset)) {
      this.warn('unknown-charset');
    }
    let text = decodeBytes(bytes, charset);
    if (text.indexOf('\r') !== -1) text = text.replace(/\r\n?/g, '\n');
    if (kind === 'html' || (info.type === 'text/plain' && LOOKS_HTML.test(text.slice(0, 1024)))) {
      // text/plain that is really HTML (spam tools do this): index the text, not the markup
      text = this.htmlText(text);
    } else if (info.type === 'text/enriched' || info.type === 'text/richtext') {
      text = enrichedToText(text);
    } else if (/^begin(?:-base64)? [0-7]{3,4} /m.test(text)) {
      text = this.extractUuencoded(text, part);
    }
    this.budget -= text.length;
    return text;
  }

  /**
   * HTML to text in ~1 MB slices cut after a '>', stopping once the budget is filled: a
   * 50 MB HTML part costs the few MB that are actually kept, not 50 MB of regex passes.
   */
  htmlText(html) {
    if (html.length <= HTML_CHUNK) return htmlToText(html);
    const out = [];
    let have = 0;
    let pos = 0;
    while (pos < html.length && have < this.budget) {
      let end = Math.min(html.length, pos + HTML_CHUNK);
      if (end < html.length) {
        const gt = html.lastIndexOf('>', end);
        if (gt > pos) end = gt + 1;
      }
      const t = htmlToText(html.slice(pos, end));
      out.push(t);
      have += t.length + 1;
      pos = end;
    }
    return out.join('\n');
  }

  /** Old mailers inlined files with uuencode; list them as attachments, drop them from text. */
  extractUuencoded(text, part) {
    const blocks = findUuencoded(text);
    if (!blocks.length) return text;
    let out = '';
    let last = 0;
    blocks.forEach((b, i) => {
      this.attachments.push({
        part: `${part}.uu${i + 1}`,
        contentType: 'application/octet-stream',
        filename: b.filename,
        size: b.size,
        disposition: 'uuencode',
        contentId: null,
      });
      out += text.slice(last, b.start);
      last = b.end;
    });
    return out + text.slice(last);
  }
}

/**
 * The cooperative half of the parse budget: throws 'too-complex' once the deadline has
 * passed. Called per MIME part and per header field, so a message cannot run far past it;
 * the hard half (worker terminated, heap capped) is in ./bounded-pool.js.
 */
function checkDeadline(deadline) {
  if (deadline !== Infinity && Date.now() > deadline) {
    throw new MessageParseError(
      'too-complex',
      'Message exceeded the parse time budget (MAILGATE_PARSE_TIME_MS)',
    );
  }
}

/**
 * Validates that `raw` is a mail message and splits its top-level header.
 * @returns {ReturnType<typeof splitHeader>}
 */
function checkMessage(raw, maxBytes, allowFromLine = false) {
  if (!Buffer.isBuffer(raw)) {
    if (raw instanceof Uint8Array) raw = Buffer.from(raw.buffer, raw.byteOffset, raw.length);
    else if (typeof raw === 'string') raw = Buffer.from(raw, 'utf8');
    else throw new TypeError('parseMessage: raw must be a Buffer');
  }
  const size = raw.length;
  if (size === 0) throw new MessageParseError('empty', 'Message is empty');
  if (raw.length > maxBytes) {
    throw new MessageParseError(
      'too-large',
      `Message is ${raw.length} bytes, more than the limit of ${maxBytes}`,
    );
  }
  const first = firstNonSpace(raw);
  if (first === -1) {
    throw new MessageParseError('empty', 'Message contains only whitespace');
  }
  let leadingBlank = false;
  if (first > 0) {
    // Blank lines before the header (seen in the Enron set): skip whole lines only
    const lineStart = raw.lastIndexOf(10, first) + 1;
    if (lineStart > 0) {
      raw = raw.subarray(lineStart);
      leadingBlank = true;
    }
  }
  if (looksBinary(raw)) {
    throw new MessageParseError('binary', 'Input looks like binary data, not a mail message');
  }
  let fromLine = false;
  if (allowFromLine && raw.length > 5 && raw.latin1Slice(0, 5) === 'From ') {
    // opt-in: an mbox envelope line left in a maildir/MH file; parse what follows it
    const nl = raw.indexOf(10);
    if (nl !== -1) {
      raw = raw.subarray(nl + 1);
      fromLine = true;
    }
  }
  const top = splitHeader(raw);
  if (!top.firstLineIsField) {
    throw new MessageParseError(
      'no-header',
      'Input does not start with a header field ("Name: value", RFC 5322 2.2)',
    );
  }
  if (raw.subarray(0, top.headerEnd).indexOf(0) !== -1) {
    throw new MessageParseError('nul-in-header', 'NUL byte inside the header block');
  }
  return { raw, top, fromLine, leadingBlank, size };
}

/**
 * Parses a raw RFC 5322 message into the columns mailgate stores and searches. Synchronous,
 * single pass over Buffers, no streams: it runs inside import worker threads.
 *
 * Throws {@link MessageParseError} only for input that is not a message at all; every other
 * defect is tolerated and reported in `warnings`.
 *
 * @param {Buffer} raw the message bytes (no mbox "From " line)
 * @param {object} [opts]
 * @param {number} [opts.maxBytes=104857600] larger input → MessageParseError 'too-large'
 * @param {number} [opts.maxBodyText=2000000] cap for bodyText, in UTF-16 code units
 * @param {boolean} [opts.allowMboxFromLine=false] skip a leading mbox "From " envelope line
 *   instead of rejecting the input as 'no-header' (warning 'mbox-from-line')
 * @param {number} [opts.timeBudgetMs] past this many ms → MessageParseError 'too-complex'
 *   (checked between parts and header fields; default: no limit)
 * @param {boolean} [opts.keepHeaders=false] also return `headers`: every field decoded,
 *   `[{key, value}]` in order (the message view shows them)
 * @returns {ParsedMessage}
 */
function parseMessage(raw, opts = {}) {
  const deadline = opts.timeBudgetMs > 0 ? Date.now() + opts.timeBudgetMs : Infinity;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxBodyText = opts.maxBodyText ?? DEFAULT_MAX_BODY_TEXT;
  const checked = checkMessage(raw, maxBytes, opts.allowMboxFromLine === true);
  raw = checked.raw;
  const top = checked.top;
  const w = new Walker({ maxBodyText, deadline });
  if (checked.fromLine) w.warn('mbox-from-line');
  if (checked.leadingBlank) w.warn('leading-blank-lines');
  if (top.junk) w.warn('missing-header-separator');

  let subject = null;
  let date = null;
  let dateSeen = false;
  let messageId = null;
  let inReplyTo = null;
  let references = null;
  let from = null;
  let fromText = '';
  let to = null;
  let toText = '';
  let cc = null;
  let ccText = '';
  let bcc = null;
  let replyTo = null;
  let headerText = '';
  const headers = opts.keepHeaders ? [] : null;
  // Every From/To/Cc field's value: SEARCH reads a field given twice as one list.
  const searchValues = { from: [], to: [], cc: [] };

  for (let fi = 0; fi < top.fields.length; fi++) {
    const f = top.fields[fi];
    if ((fi & 255) === 255) checkDeadline(deadline);
    const uni = rawToUnicode(f.value);
    const decoded = cleanText(decodeWords(uni));
    headerText += f.name + ': ' + decoded + '\n';
    if (headers) headers.push({ key: f.name, value: decoded });
    if (searchValues[f.key]) searchValues[f.key].push(uni);
    switch (f.key) {
      case 'subject':
        if (subject === null) subject = decoded;
        break;
      case 'date':
        if (!dateSeen) {
          dateSeen = true;
          date = parseDate(uni);
          if (date === null) w.warn('invalid-date');
        }
        break;
      case 'message-id':
        if (messageId === null)
          messageId = cleanText(parseMessageIds(uni)[0] || uni.trim()) || null;
        break;
      case 'in-reply-to':
        if (inReplyTo === null) inReplyTo = cleanText(parseMessageIds(uni)[0] || '') || null;
        break;
      case 'references':
        if (references === null) references = parseMessageIds(uni).map(cleanText);
        break;
      case 'from':
        if (from === null) {
          const r = parseAddressListWithGroups(uni);
          from = r.list;
        }
        break;
      case 'to':
        if (to === null) {
          const r = parseAddressListWithGroups(uni);
          to = r.list;
        }
        break;
      case 'cc':
        if (cc === null) {
          const r = parseAddressListWithGroups(uni);
          cc = r.list;
        }
        break;
      case 'bcc':
        if (bcc === null) bcc = parseAddressListWithGroups(uni).list;
        break;
      case 'reply-to':
        if (replyTo === null) replyTo = parseAddressListWithGroups(uni).list;
        break;
    }
  }

  // The substring text of FROM/TO/CC (RFC 3501 6.4.4), as Dovecot writes it: comments
  // dropped, groups kept, both lines of a field given twice (issue 28 items 5 and 8).
  // Each line on its own (a match never spans two fields), as Dovecot searches them.
  const nameText = (n) => cleanText(decodeWords(n));
  const searchText = (values) => values.map((v) => addressSearchText(v, nameText)).join('\n');
  fromText = searchText(searchValues.from);
  toText = searchText(searchValues.to);
  ccText = searchText(searchValues.cc);

  const body = raw.subarray(top.bodyStart);
  const info = entityInfo(top.fields, 'text/plain');
  const r = w.walk(top.fields, body, '', true, 0, 'text/plain');
  let bodyText = r.text;
  if (bodyText.length > maxBodyText) {
    bodyText = bodyText.slice(0, maxBodyText);
    w.warn('body-text-truncated');
  }

  return {
    subject,
    date,
    messageId,
    inReplyTo,
    references: references || [],
    from: from && from.length ? from[0] : null,
    to: to || [],
    cc: cc || [],
    bcc: bcc || [],
    replyTo: replyTo || [],
    fromText,
    toText,
    ccText,
    headerText,
    bodyText: cleanText(bodyText),
    searchBodyText: cleanText(w.searchTexts.filter(Boolean).join('\n').slice(0, maxBodyText)),
    partHeaderText: w.partHeaders.join(''),
    hasAttachments: w.attachments.length > 0,
    attachments: w.attachments,
    contentType: info.type,
    size: checked.size,
    warnings: w.warnings,
    ...(headers ? { headers } : {}),
  };
}

/**
 * Locates a part by IMAP section number ('1', '2.1'), or a uuencoded block ('1.uu2').
 *
 * @param {Buffer} raw
 * @param {string} part
 * @returns {{ info: ReturnType<typeof entityInfo>, body: Buffer } | null}
 */
function findPart(raw, part) {
  const checked = checkMessage(raw, Infinity, true);
  const top = checked.top;
  raw = checked.raw;
  const m = /^(\d+(?:\.\d+)*)(?:\.uu(\d+))?$/.exec(String(part));
  if (!m) return null;
  const path = m[1].split('.').map(Number);
  let fields = top.fields;
  let body = raw.subarray(top.bodyStart);
  let info = entityInfo(fields, 'text/plain');
  let isRoot = true;
  let i = 0;
  // Same numbering as Walker.walk (RFC 3501 6.4.5)
  while (i < path.length) {
    const n = path[i];
    if (info.type.startsWith('multipart/')) {
      const split = info.params.boundary ? splitMultipart(body, info.params.boundary) : null;
      if (!split || n < 1 || n > split.parts.length) return null;
      const p = split.parts[n - 1];
      const sp = splitHeader(p);
      const childDefault = info.type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      fields = sp.fields;
      body = p.subarray(sp.bodyStart);
      info = entityInfo(fields, childDefault);
      isRoot = false;
      i++;
    } else if (isRoot) {
      if (n !== 1) return null;
      isRoot = false; // the single body part of a message root is the same entity
      i++;
    } else if (/^message\/(?:rfc822|global|news)$/.test(info.type)) {
      const inner =
        info.cte === 'base64' || info.cte === 'quoted-printable'
          ? decodeTransfer(body, info.cte)
          : body;
      const sp = splitHeader(inner);
      fields = sp.fields;
      body = inner.subarray(sp.bodyStart);
      info = entityInfo(fields, 'text/plain');
      isRoot = true; // the same number now addresses the encapsulated message's parts
    } else {
      return null;
    }
  }
  if (m[2]) {
    const text = decodeTransfer(body, info.cte).latin1Slice();
    const block = findUuencoded(text)[Number(m[2]) - 1];
    if (!block) return null;
    return {
      info: { ...info, type: 'application/octet-stream', filename: block.filename, cte: '' },
      body: block.decode(),
    };
  }
  return { info, body };
}

module.exports = {
  parseMessage,
  findPart,
  splitMultipart,
  entityInfo,
  checkMessage,
  checkDeadline,
};
