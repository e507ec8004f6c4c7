'use strict';

/*
 * FETCH and UID FETCH (RFC 3501 6.4.5, 7.4.2; RFC 7162 CHANGEDSINCE/MODSEQ, VANISHED):
 * parsing of data items and sections, then one FETCH response per message, streamed with the
 * socket's backpressure. Header-row items (UID FLAGS INTERNALDATE RFC822.SIZE MODSEQ) come
 * from one scan; ENVELOPE, BODY, BODYSTRUCTURE, RFC822.SIZE and list-view header fields come
 * from the metadata kept at import (meta.js), anything else reads the stored bytes, and every
 * BODY[section] is a slice of those exact bytes (@mailgate/mime tree.js). Structures derived
 * here are cached per (user, mailbox, uidvalidity, uid): a uid's bytes never change. So are
 * the bytes themselves (the server's body-cache.js): a FETCH of cached messages that needs
 * nothing else (BODY.PEEK[…], RFC822.SIZE, UID) is answered without a statement.
 */

const { atom, literal } = require('../protocol/writer');
const { bad } = require('../errors');
const { numberArg, listArg, atomArg, astring } = require('../protocol/args');
const {
  parseSequenceSet,
  resolveSeq,
  resolveUid,
  pastEnd,
  formatSet,
  compileSet,
} = require('../protocol/sequence');
const { rowsFor, flagsOf, flagResult } = require('../mail-data');
const { announceKeywords } = require('../keywords');
const { describe } = require('@mailgate/mime/structure');
const { parseTree, nodeAt } = require('@mailgate/mime/tree');
const { StructureCache, mailboxScope } = require('../cache');
const {
  coveredItem,
  partsFor,
  headerFields,
  headerFieldsItem,
  headerFieldsText,
  metaFor,
  derivedMeta,
  packedFields,
} = require('../meta');
const { toCrlf } = require('@mailgate/mime/crlf');
const { fieldRanges } = require('@mailgate/mime/imap-meta');

// Messages per getRawMany call when FETCH must read stored bytes.
const RAW_BATCH = 500;
const META_CHUNK = 2000;
const META_READ = 25000;
// A list view of at least PACKED_MIN messages is read packed, PACKED_READ messages per read
// (~0.5 KB of header lines a message: a few MB per read, however large the mailbox).
const PACKED_MIN = 256;
const PACKED_READ = 25000;
// Bytes of FETCH responses per socket write on the kept-metadata path.
const WRITE_BYTES = 256 * 1024;
const MAX_MODSEQ = Number.MAX_SAFE_INTEGER;
// A last batch of at most this many bytes waits in the corked socket for the tagged OK (one
// write for a FETCH of a message or a few); a larger one is flushed and drained first.
const HOLD_BYTES = 64 * 1024;
const cache = new StructureCache(20000);
const OWN = Object.freeze({ own: true });

const MACROS = {
  ALL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE'],
  FAST: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'],
  FULL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODY'],
};
// Items answered from the raw message; the other SIMPLE items come from the stored row.
const NEEDS_RAW = new Set([
  'ENVELOPE',
  'BODY',
  'BODYSTRUCTURE',
  'RFC822',
  'RFC822.HEADER',
  'RFC822.TEXT',
]);
// Items that need the message (or its kept metadata): RFC822.SIZE too, as it is the size of
// the CRLF form served (crlf.js), not of the stored bytes the list rows count.
const needsMessage = (i) =>
  NEEDS_RAW.has(i.name) || i.name === 'BODY[]' || i.name === 'RFC822.SIZE';
// Items named by one atom (BODY[...] sections are parsed apart).
const SIMPLE = new Set(['UID', 'FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'MODSEQ', ...NEEDS_RAW]);
const SECTION_RE = /^BODY(\.PEEK)?\[([^\]]*)\](?:<(\d{1,10})\.(\d{1,10})>)?$/i;

/**
 * @param {object[]} tokens the items argument (atom or list)
 * @returns {Array<{name: string, section?: object, peek?: boolean, partial?: [number, number]|null, label?: string}>}
 */
function parseItems(token) {
  const list = token.type === 'list' ? token.value : [token];
  if (!list.length) throw bad('No fetch items');
  const out = [];
  for (const t of list) {
    if (t.type !== 'atom') throw bad('Invalid fetch item');
    const up = t.value.toUpperCase();
    if (MACROS[up] && token.type !== 'list') {
      for (const m of MACROS[up]) out.push({ name: m });
      continue;
    }
    if (SIMPLE.has(up)) {
      out.push({ name: up });
      continue;
    }
    const m = SECTION_RE.exec(t.value);
    if (!m) throw bad(`Invalid fetch item ${t.value.slice(0, 40)}`);
    const section = parseSection(m[2]);
    const partial = m[3] !== undefined ? [Number(m[3]), Number(m[4])] : null;
    if (partial && partial[1] === 0) throw bad('Invalid partial length');
    out.push({
      name: 'BODY[]',
      peek: Boolean(m[1]),
      section,
      partial,
      label: `BODY[${section.text}]${partial ? `<${partial[0]}>` : ''}`,
    });
  }
  return out;
}

/** `1.2.HEADER.FIELDS (A B)` → {path, part, fields, text} (RFC 3501 6.4.5). */
function parseSection(text) {
  const m =
    /^((?:[1-9]\d{0,5}\.)*[1-9]\d{0,5})?(?:^|\.)?(HEADER\.FIELDS\.NOT|HEADER\.FIELDS|HEADER|TEXT|MIME)?(?:\s+\((.*)\))?$/i.exec(
      text.trim(),
    );
  if (!m) throw bad('Invalid section');
  const path = m[1] ? m[1].split('.').map(Number) : [];
  const part = m[2] ? m[2].toUpperCase() : '';
  if (path.length > 32) throw bad('Section too deep');
  if (part === 'MIME' && !path.length) throw bad('MIME needs a part number');
  let fields = null;
  if (part.startsWith('HEADER.FIELDS')) {
    if (m[3] === undefined) throw bad('HEADER.FIELDS needs a field list');
    fields = fieldNames(m[3]);
    if (!fields.length) throw bad('Empty field list');
  } else if (m[3] !== undefined) throw bad('Invalid section');
  const name = [m[1], part].filter(Boolean).join('.');
  const shown = fields ? `${name} (${fields.map((f) => f.toUpperCase()).join(' ')})` : name;
  return { path, part, fields: fields && new Set(fields.map((f) => f.toLowerCase())), text: shown };
}

function fieldNames(text) {
  const out = [];
  const re = /"((?:[^"\\]|\\.)*)"|([^\s"()]+)/g;
  let m;
  while ((m = re.exec(text))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]);
  if (out.length > 200) throw bad('Too many header fields');
  if (out.some((f) => !/^[\x21-\x39\x3b-\x7e]+$/.test(f))) throw bad('Invalid header field name');
  return out;
}

/** `(CHANGEDSINCE n [VANISHED])` fetch modifiers (RFC 7162 3.1.4, 3.2.6). */
function parseModifiers(token) {
  const out = { changedSince: null, vanished: false };
  if (!token) return out;
  const list = listArg(token, 'fetch modifiers');
  for (let i = 0; i < list.length; i++) {
    const key = atomArg(list[i], 'fetch modifier');
    if (key === 'CHANGEDSINCE') out.changedSince = numberArg(list[++i], 'mod-sequence', MAX_MODSEQ);
    else if (key === 'VANISHED') out.vanished = true;
    else throw bad(`Unknown fetch modifier ${key}`);
  }
  return out;
}

/**
 * Runs FETCH or UID FETCH.
 * @param {import('./session').Session} s
 * @param {object[]} args sequence set, items, [modifiers]
 * @param {boolean} byUid
 */
async function runFetch(s, args, byUid) {
  if (args.length < 2 || args.length > 3) throw bad('FETCH needs a sequence set and items');
  const setText = astring(args[0], 'sequence set');
  let ranges;
  try {
    ranges = parseSequenceSet(setText);
  } catch (err) {
    throw bad(err.message);
  }
  const items = parseItems(args[1]);
  const mods = parseModifiers(args[2]);
  if (mods.vanished && (!byUid || !s.enabled.has('QRESYNC') || mods.changedSince === null)) {
    throw bad('VANISHED needs UID FETCH, QRESYNC and CHANGEDSINCE');
  }
  const v = s.view;
  if (byUid && !items.some((i) => i.name === 'UID')) items.unshift({ name: 'UID' });
  if (mods.changedSince !== null) {
    s.condstore = true;
    if (!items.some((i) => i.name === 'MODSEQ')) items.push({ name: 'MODSEQ' });
  }
  if (items.some((i) => i.name === 'MODSEQ')) s.condstore = true;
  if (!byUid && pastEnd(ranges, v.total)) throw bad('Invalid message sequence number');
  const seqs = byUid ? resolveUid(ranges, v.uids) : resolveSeq(ranges, v.total);
  const looked = { wires: null };
  const cached = await fromCache(s, items, seqs, mods, looked);
  if (cached) return cached;
  const read = await checkView(s, items, seqs, mods, looked.wires);
  if (!read) return;
  if (mods.vanished) {
    const ch = await s.backend.changesSince(v.name, mods.changedSince);
    const asked = compileSet(ranges, Infinity); // merged once, not per expunged uid
    const gone = (ch.expunged || []).map(Number).filter((u) => asked.has(u) && !v.seqOf(u));
    if (gone.length) s.untagged([atom('VANISHED'), [atom('EARLIER')], atom(formatSet(gone))]);
  }
  if (!seqs.length) return;
  const uids = seqs.map((n) => v.uidAt(n));
  const rows = await rowsFor(s.backend, v.name, uids, s.knownStatus());
  let targets = seqs.filter((n) => rows.has(v.uidAt(n)));
  if (mods.changedSince !== null) {
    targets = targets.filter((n) => Number(rows.get(v.uidAt(n)).modseq) > mods.changedSince);
    // These rows go out with their FLAGS and MODSEQ as the answer: the sync after the command
    // must not send them again as unsolicited FETCHes (RFC 7162 3.1.4.1: once).
    if (items.some((i) => i.name === 'FLAGS' && !i.implicit)) {
      v.noteOwn(targets.map((n) => ({ uid: v.uidAt(n), modseq: rows.get(v.uidAt(n)).modseq })));
    }
  }
  const needsRaw = items.some(needsMessage);
  const setsSeen =
    !v.readOnly &&
    items.some(
      (i) => (i.name === 'BODY[]' && !i.peek) || i.name === 'RFC822' || i.name === 'RFC822.TEXT',
    );
  if (setsSeen) {
    const unseen = targets
      .map((n) => v.uidAt(n))
      .filter((u) => !rows.get(u).flags.includes('\\Seen'));
    if (unseen.length) {
      // A write: the sync after this FETCH reads the status again (session.js), so a \Seen that
      // another session set first, which this write then did not change, is reported now.
      if (s.checked) s.checked.wrote = true;
      const { changed } = flagResult(await s.backend.setFlags(v.name, unseen, ['\\Seen'], []));
      v.noteOwn(changed);
      for (const c of changed) {
        const row = rows.get(Number(c.uid));
        if (row)
          rows.set(Number(c.uid), {
            ...row,
            flags: c.flags,
            keywords: c.keywords,
            modseq: c.modseq,
          });
      }
      if (!items.some((i) => i.name === 'FLAGS'))
        items.push({ name: 'FLAGS', implicit: new Set(unseen) });
    }
  }
  // Keywords set since the SELECT by a change this session was not told of yet: a new FLAGS
  // first, so no FETCH carries a keyword FLAGS did not list.
  if (items.some((i) => i.name === 'FLAGS')) {
    announceKeywords(
      s,
      v,
      targets.map((n) => rows.get(v.uidAt(n)).keywords),
    );
  }
  const ctx = { s, v, items, user: s.user };
  // Items the kept metadata answers (ENVELOPE, BODYSTRUCTURE, list-view header fields): no
  // message is read, a first sync of a large mailbox is a narrow read (meta.js).
  const rawItems = items.filter(needsMessage);
  const caps = s.backend.capabilities;
  if (rawItems.length && rawItems.every(coveredItem) && caps && caps.has('getImapMeta')) {
    const packedPart = packedListView(rawItems, targets, v, caps);
    if (packedPart) {
      await writeListView(ctx, targets, rows, packedPart);
      return;
    }
    const w = new WireBuffer(WRITE_BYTES + 65536);
    // The kept metadata read META_READ messages per call (one statement on pg when it is all
    // kept): read per 2,000-message chunk, a cold first sync of 21,282 messages made 11
    // index-probing statements, ~150 ms each after a restart (issue 35.3). Bounded all the
    // same (~1.4 KB a message), so a mailbox of a million messages is not held at once.
    for (let r = 0; r < targets.length; r += META_READ) {
      const part = targets.slice(r, r + META_READ);
      const metas = await metaFor(
        s.backend,
        v,
        s.user,
        part.map((n) => v.uidAt(n)),
        partsFor(rawItems),
      );
      if (s.closed) return;
      for (let i = 0; i < part.length; i += META_CHUNK) {
        const chunk = part.slice(i, i + META_CHUNK);
        const last = r + META_READ >= targets.length && i + META_CHUNK >= part.length;
        if (!(await writeMetaResponses(ctx, chunk, rows, (k, uid) => metas.get(uid), w, last)))
          return;
      }
    }
    return;
  }
  // Everything else: the stored bytes of RAW_BATCH messages per service call (getRawMany, one
  // query on pg), those the body cache holds excepted, and one socket write per batch.
  const bodies = s.server.bodyCache;
  const scope = mailboxScope(s.user, v);
  for (let i = 0; i < targets.length; i += RAW_BATCH) {
    const batch = targets.slice(i, i + RAW_BATCH);
    let wires = EMPTY_MAP;
    let raws = EMPTY_MAP;
    if (needsRaw && read.raws && i === 0) ({ wires, raws } = read);
    else if (needsRaw) {
      wires = cachedWires(s, batch);
      const missing = batch.map((n) => v.uidAt(n)).filter((u) => !wires.has(u));
      if (missing.length) raws = await s.backend.getRawMany(v.name, missing);
    }
    if (s.closed) return;
    s.socket.cork();
    for (const seq of batch) {
      const uid = v.uidAt(seq);
      let wire = wires.get(uid) || null;
      if (!wire) {
        const raw = raws.get(uid) || null;
        if (needsRaw && !raw) continue; // expunged meanwhile (RFC 3501 7.4.1 allows omission)
        // Every section, size and structure is taken on the CRLF form served (crlf.js), in an
        // allocation of its own: the response's literal and the body cache share that Buffer.
        wire = raw && toCrlf(raw, OWN);
        // Kept only once served: the list view says the message is visible in this view.
        if (wire && bodies) bodies.set(s.user, scope, uid, wire);
      }
      s.untagged([seq, atom('FETCH'), responseItems(ctx, uid, rows.get(uid), wire)]);
    }
    if (i + RAW_BATCH >= targets.length && s.socket.writableLength <= HOLD_BYTES) {
      // A short last batch leaves with the tagged OK, in one write (session holdOutput).
      s.holdOutput();
      return;
    }
    s.socket.uncork();
    if (s.socket.writableNeedDrain) await s.drain();
  }
}

/**
 * The kept value a FETCH is answered from by packed reads (writeListView), or null: its message
 * items are RFC822.SIZE and either top-level header fields the kept lines cover (a list view:
 * `fields`) or ENVELOPE (a first sync: `envelope`), not both, nor BODY or BODYSTRUCTURE, for
 * many messages whose uids fill most of their range (a range read then reads little that is
 * not asked for).
 * @param {Array<{name: string}>} rawItems covered items (coveredItem)
 * @param {number[]} targets sequence numbers, ascending
 * @param {object} v the view
 * @param {Set<string>} caps the backend's capabilities
 * @returns {'fields'|'envelope'|null}
 */
function packedListView(rawItems, targets, v, caps) {
  if (!caps.has('getImapFieldsRange') || targets.length < PACKED_MIN) return null;
  const names = new Set(rawItems.map((i) => i.name));
  names.delete('RFC822.SIZE');
  if (names.size > 1) return null;
  const part = names.has('BODY[]') ? 'fields' : names.has('ENVELOPE') ? 'envelope' : null;
  if (!part) return null;
  const span = v.uidAt(targets[targets.length - 1]) - v.uidAt(targets[0]) + 1;
  return targets.length * 2 >= span ? part : null;
}

/**
 * A list view (FLAGS, RFC822.SIZE, BODY.PEEK[HEADER.FIELDS (…)] of many messages), or an
 * ENVELOPE fetch of many, from the kept header lines (or ENVELOPEs) read PACKED_READ messages
 * at a time, packed (getImapFieldsRange: a row per 512 uids, no object per message; kept in
 * memory as read, meta.js packedFields). Each row is written as PostgreSQL sends it: a cold
 * list view of the large Enron mailbox otherwise waited for the last of its 42 rows (~30-50 ms
 * of PostgreSQL aggregating and sending) before it wrote the first response, and then spent
 * its own ~70 ms alone (issue 35.3, bench/results/imap-cold-listview-2026-11-28-s8). (Reads
 * of 4,096 messages instead, the next read running while one is written, each scanned the
 * whole partition: slower.) What made a first list view after a restart slow before that
 * was the garbage collector copying 21,282 row objects and their strings kept in memory (~40%
 * of the FETCH, issue 35.3). Messages without kept lines are derived from their bytes. The
 * bytes are those metaItemsWrite writes on the other path (test/list-view.pg.test.js).
 * @param {object} ctx
 * @param {number[]} targets sequence numbers, ascending
 * @param {Map<number, object>} rows header rows by uid
 * @param {'fields'|'envelope'} what the kept value read (packedListView)
 */
async function writeListView(ctx, targets, rows, what) {
  const { s, v } = ctx;
  const w = new WireBuffer(WRITE_BYTES + 65536);
  for (let r = 0; r < targets.length; r += PACKED_READ) {
    const part = targets.slice(r, r + PACKED_READ);
    const last = r + PACKED_READ >= targets.length;
    // The targets up to each part's last uid are written as the part arrives (in uid order);
    // those it lacks (no kept lines) are derived from their bytes in place.
    let i = 0;
    const onPart = async (packed) => {
      if (s.closed) throw SESSION_CLOSED;
      const upTo = packed.uids.length ? packed.uids[packed.uids.length - 1] : -1;
      let j = i;
      while (j < part.length && v.uidAt(part[j]) <= upTo) j++;
      const span = part.slice(i, j);
      i = j;
      if (span.length && !(await writeSpan(ctx, span, rows, packed, what, w, false))) {
        throw SESSION_CLOSED;
      }
    };
    try {
      await packedFields(
        s.backend,
        v,
        s.user,
        v.uidAt(part[0]),
        v.uidAt(part[part.length - 1]),
        s.server.listViewCache,
        what,
        onPart,
      );
    } catch (err) {
      if (err === SESSION_CLOSED || s.closed) return;
      throw err;
    }
    if (!(await writeSpan(ctx, part.slice(i), rows, NO_PACKED, what, w, last))) return;
  }
}

// Thrown out of a part's handler to end a list view whose session closed (the store reads and
// drops the rest of its statement's rows).
const SESSION_CLOSED = new Error('session closed');
const NO_PACKED = Object.freeze({
  uids: new Float64Array(0),
  sizes: new Uint32Array(0),
  starts: new Uint32Array(0),
  ends: new Uint32Array(0),
  text: '',
});

/**
 * The responses of `seqs` (ascending) from one packed part: each target's index in the part
 * (-1: not in it, derived from its bytes), then writePackedResponses.
 * @returns {Promise<boolean>} false when the session closed
 */
async function writeSpan(ctx, seqs, rows, packed, what, w, last) {
  const { s, v } = ctx;
  const at = new Int32Array(seqs.length);
  const missing = [];
  const pu = packed.uids;
  for (let i = 0, j = 0; i < seqs.length; i++) {
    const uid = v.uidAt(seqs[i]);
    while (j < pu.length && pu[j] < uid) j++;
    if (j < pu.length && pu[j] === uid) at[i] = j;
    else {
      at[i] = -1;
      missing.push(uid);
    }
  }
  // Derived from their bytes (the store keeps nothing for them: no second read of it).
  const derived = missing.length ? await derivedMeta(s.backend, v, s.user, missing) : null;
  if (s.closed) return false;
  return writePackedResponses(ctx, seqs, rows, at, packed, what, derived, w, last);
}

/**
 * Writes one FETCH response per message of a packed read straight into `w`'s buffer (issue
 * 35.3's response writer): the kept value is copied from the packed text, and only the sequence
 * number, UID, FLAGS, INTERNALDATE, RFC822.SIZE and MODSEQ are formatted per message, digits
 * written as bytes; no template literal, no string joined per message, no object per message.
 * Through metaItemsWrite (pieces of text joined, then copied 64 KB at a time) a cold process's
 * first list view of the large Enron mailbox spent ~40 ms writing 21,282 responses (a third
 * of its CPU, bench/results/imap-cold-listview-2026-11-28b). The same bytes as metaItemsWrite
 * (test/list-view.pg.test.js compares them with the answers derived from the message bytes).
 * Messages without kept values (at[i] < 0) are written from their derived metadata by
 * metaItemsWrite, in place. Sent WRITE_BYTES at a time as writeMetaResponses does.
 * @param {{s: object, v: object, items: object[]}} ctx
 * @param {number[]} seqs sequence numbers of this read
 * @param {Map<number, object>} rows header rows by uid
 * @param {Int32Array} at each message's index in the packed lists, -1 for none
 * @param {{sizes: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, text: string}} packed
 * @param {'fields'|'envelope'} what the kept value read
 * @param {Map<number, object>|null} derived metadata of the messages without kept values
 * @param {WireBuffer} w
 * @param {boolean} last whether this is the FETCH's last read
 * @returns {Promise<boolean>} false when the session closed
 */
async function writePackedResponses(ctx, seqs, rows, at, packed, what, derived, w, last) {
  const { s, v, items } = ctx;
  const { starts, ends, sizes, text } = packed;
  const recent = v.recent;
  const ranges = [];
  for (let i = 0; i < seqs.length; i++) {
    const seq = seqs[i];
    const uid = v.uidAt(seq);
    const j = at[i];
    const row = rows.get(uid);
    if (j < 0) {
      const meta = derived.get(uid);
      if (!meta) continue; // expunged meanwhile
      w.text(`* ${seq} FETCH (`);
      metaItemsWrite(ctx, uid, row, meta, w);
      w.text(')\r\n');
    } else {
      w.ascii(STAR);
      w.num(seq);
      w.ascii(FETCH_OPEN);
      let sep = false;
      for (let k = 0; k < items.length; k++) {
        const it = items[k];
        if (it.implicit && !it.implicit.has(uid)) continue;
        if (sep) w.ascii(SPACE);
        sep = true;
        switch (it.name) {
          case 'UID':
            w.ascii(UID_);
            w.num(uid);
            break;
          case 'FLAGS':
            w.ascii(FLAGS_);
            w.put(flagsText(row, recent));
            w.ascii(CLOSE_PAREN);
            break;
          case 'INTERNALDATE':
            w.ascii(IDATE_);
            w.put(imapDate(row.internalDate));
            w.ascii(QUOTE);
            break;
          case 'RFC822.SIZE':
            w.ascii(SIZE_);
            w.num(sizes[j]);
            break;
          case 'MODSEQ':
            w.ascii(MODSEQ_);
            w.num(Number(row.modseq));
            w.ascii(CLOSE_PAREN);
            break;
          case 'ENVELOPE':
            w.ascii(ENVELOPE_);
            w.put(text.slice(starts[j], ends[j]));
            break;
          case 'BODY[]': {
            // what is 'fields' here (packedListView): the only section a packed read answers.
            if (!it.partial) {
              // The kept lines' ranges copied character by character: no string per message
              // (pickFields joined the lines into one, the largest share of a cold list view's
              // garbage with the driver's text).
              const len = fieldRanges(text, starts[j], ends[j], it.section.fields, ranges);
              w.put(it.label);
              w.ascii(LITERAL_OPEN);
              w.num(len);
              w.ascii(LITERAL_CLOSE);
              w.ranges(text, ranges, len - 2);
              w.ascii(CRLF);
              break;
            }
            let data = headerFieldsText(text.slice(starts[j], ends[j]), it.section.fields);
            if (it.partial) {
              const [start, len] = it.partial;
              data = start >= data.length ? '' : data.slice(start, start + len);
            }
            w.put(it.label);
            w.ascii(LITERAL_OPEN);
            w.num(data.length);
            w.ascii(LITERAL_CLOSE);
            w.put(data);
            break;
          }
          /* istanbul ignore next: packedListView admits nothing else */
          default:
            break;
        }
      }
      w.ascii(RESPONSE_END);
    }
    if (w.off >= WRITE_BYTES) {
      s.send(w.take());
      if (s.socket.writableNeedDrain) await s.drain();
      if (s.closed) return false;
    }
  }
  return finishWrite(s, w, last);
}

// The constant bytes of a packed response (latin1).
const bytesOf = (t) => Uint8Array.from(Buffer.from(t, 'latin1'));
const STAR = bytesOf('* ');
const FETCH_OPEN = bytesOf(' FETCH (');
const RESPONSE_END = bytesOf(')\r\n');
const SPACE = bytesOf(' ');
const UID_ = bytesOf('UID ');
const FLAGS_ = bytesOf('FLAGS (');
const CLOSE_PAREN = bytesOf(')');
const IDATE_ = bytesOf('INTERNALDATE "');
const QUOTE = bytesOf('"');
const SIZE_ = bytesOf('RFC822.SIZE ');
const MODSEQ_ = bytesOf('MODSEQ (');
const ENVELOPE_ = bytesOf('ENVELOPE ');
const LITERAL_OPEN = bytesOf(' {');
const LITERAL_CLOSE = bytesOf('}\r\n');
const CRLF = bytesOf('\r\n');

/**
 * Writes one FETCH response per message from kept metadata (metaItemsWrite) into `w`, sent
 * WRITE_BYTES at a time with the socket's backpressure: the one loop of both kept-metadata
 * paths (runFetch's META_READ reads and writeListView's packed reads). Responses are latin1 text
 * (one char per byte) copied straight into one buffer: a header scan's cost is per message, so
 * no per-token Buffers, no long concatenated string, no write per message. The FETCH's last
 * batch, when short, stays corked for the tagged OK (session holdOutput): a FETCH of ENVELOPE or
 * header fields of a few messages is one socket write, as a FETCH of their bytes is (it was two).
 * @param {{s: object, v: object}} ctx
 * @param {number[]} seqs sequence numbers of this batch
 * @param {Map<number, object>} rows header rows by uid
 * @param {(i: number, uid: number) => object|undefined} metaAt the i-th message's metadata
 *   (undefined: expunged meanwhile, left out as RFC 3501 7.4.1 allows)
 * @param {WireBuffer} w
 * @param {boolean} last whether this is the FETCH's last batch
 * @returns {Promise<boolean>} false when the session closed (nothing more to write)
 */
async function writeMetaResponses(ctx, seqs, rows, metaAt, w, last) {
  const { s, v } = ctx;
  for (let i = 0; i < seqs.length; i++) {
    const seq = seqs[i];
    const uid = v.uidAt(seq);
    const meta = metaAt(i, uid);
    if (!meta) continue;
    w.text(`* ${seq} FETCH (`);
    metaItemsWrite(ctx, uid, rows.get(uid), meta, w);
    w.text(')\r\n');
    if (w.off >= WRITE_BYTES) {
      s.send(w.take());
      if (s.socket.writableNeedDrain) await s.drain();
      if (s.closed) return false;
    }
  }
  return finishWrite(s, w, last);
}

/**
 * Sends what `w` holds at the end of a batch: the FETCH's last batch, when short, stays corked
 * for the tagged OK (session holdOutput), else it is sent and drained.
 * @returns {Promise<boolean>} false when the session closed
 */
async function finishWrite(s, w, last) {
  if (last && w.off && s.socket.writableLength + w.off <= HOLD_BYTES) {
    s.socket.cork();
    s.send(w.take());
    s.holdOutput();
    return true;
  }
  if (w.off) s.send(w.take());
  if (s.socket.writableNeedDrain) await s.drain();
  return !s.closed;
}

/**
 * The check that the selected mailbox is still the one the session opened
 * (session.viewStillSelected), which the session leaves to FETCH: a FETCH of the bytes of at
 * most RAW_BATCH messages reads them with the mailbox's status in one statement
 * (getRawWithStatus), one round trip instead of two (issue 28: `UID FETCH n (BODY.PEEK[])`
 * made two, most of its time on a busy machine). Bytes read under a name that now denotes
 * another mailbox are dropped with the BYE, never sent.
 * Bytes the body cache holds are not read again; when it holds them all, the check is the
 * mailbox's status alone.
 * @param {Map<number, Buffer>|null} [looked] the cached bytes fromCache already looked up
 * @returns {Promise<{raws: Map<number, Buffer>|null, wires?: Map<number, Buffer>}|null>} null
 *   when the session ended; raws: stored bytes read, wires: cached CRLF bytes
 */
async function checkView(s, items, seqs, mods, looked = null) {
  const caps = s.backend.capabilities;
  const rawItems = items.filter(needsMessage);
  const onePass =
    seqs.length > 0 &&
    seqs.length <= RAW_BATCH &&
    rawItems.length > 0 &&
    mods.changedSince === null &&
    !(rawItems.every(coveredItem) && caps && caps.has('getImapMeta')) &&
    caps &&
    caps.has('getRawWithStatus');
  if (!onePass) return (await s.viewStillSelected()) ? { raws: null } : null;
  const v = s.view;
  const wires = looked || cachedWires(s, seqs);
  const missing = seqs.map((n) => v.uidAt(n)).filter((u) => !wires.has(u));
  if (!missing.length) return (await s.viewStillSelected()) ? { raws: EMPTY_MAP, wires } : null;
  let got = null;
  try {
    got = await s.backend.getRawWithStatus(v.name, missing);
  } catch (err) {
    if (!err || err.code !== 'MAILBOX_NOT_FOUND') throw err;
  }
  if (!(await s.viewStillSelected(got ? got.status : null))) return null;
  return { raws: got.raws, wires };
}

const EMPTY_MAP = new Map();

/**
 * The CRLF bytes the server's body cache holds of these messages of the selected mailbox.
 * @param {import('../session').Session} s
 * @param {number[]} seqs sequence numbers in the session's view
 * @returns {Map<number, Buffer>} uid → bytes
 */
function cachedWires(s, seqs) {
  const bodies = s.server.bodyCache;
  const out = new Map();
  if (!bodies || !bodies.enabled) return out;
  const v = s.view;
  const scope = mailboxScope(s.user, v);
  for (const seq of seqs) {
    const uid = v.uidAt(seq);
    const wire = bodies.get(s.user, scope, uid);
    if (wire) out.set(uid, wire);
  }
  return out;
}

/**
 * Whether an item is answered from a message's bytes alone: no list row (FLAGS,
 * INTERNALDATE, MODSEQ) and no \Seen to set (a PEEK, or a read-only mailbox).
 * @param {{name: string, peek?: boolean}} it
 * @param {boolean} readOnly
 */
function bytesOnly(it, readOnly) {
  switch (it.name) {
    case 'UID':
    case 'RFC822.SIZE':
    case 'RFC822.HEADER':
      return true;
    case 'BODY[]':
      return Boolean(it.peek) || readOnly;
    case 'RFC822':
    case 'RFC822.TEXT':
      return readOnly;
    default:
      return false;
  }
}

/**
 * A FETCH answered from the server's body cache (body-cache.js) alone: every message asked for
 * is in the session's view and cached, and every item comes from the bytes. No statement:
 * not the read of the bytes, not the check that the selected mailbox is still the one opened
 * (the cache is keyed by the mailbox's identity, which a rename keeps and nothing reuses; the
 * entries of a mailbox this server deletes are dropped), and not the status read of the sync
 * after the command: other sessions' changes are reported at the next command that reads the
 * mailbox (NOOP, IDLE, a FETCH that reads the store …), as RFC 3501 7 allows, and never an
 * EXPUNGE during FETCH anyway (7.4.1). Visibility is the session's view: a uid it was told was
 * expunged is not in it, and one another session expunged since is served as RFC 3501 allows
 * (its entry is dropped once any session of this server learns of the expunge).
 * @param {import('../session').Session} s
 * @param {object[]} items parsed items (UID added for UID FETCH)
 * @param {number[]} seqs the sequence numbers asked for, in the session's view
 * @param {{changedSince: number|null}} mods
 * @param {{wires: Map<number, Buffer>|null}} looked where the cache's answer for some of the
 *   messages is left when it does not hold them all (checkView then reads only the others)
 * @returns {Promise<{skipSync: true}|null>} null: not answered, take the normal path
 */
async function fromCache(s, items, seqs, mods, looked) {
  const bodies = s.server.bodyCache;
  const v = s.view;
  if (!bodies || !bodies.enabled || mods.changedSince !== null) return null;
  if (!items.every((i) => bytesOnly(i, v.readOnly))) return null;
  const rawItems = items.filter(needsMessage);
  if (!rawItems.length) return null;
  // A list view's header fields come from the kept metadata (meta.js), never from here.
  const caps = s.backend.capabilities;
  if (rawItems.every(coveredItem) && caps && caps.has('getImapMeta')) return null;
  if (!seqs.length || seqs.length > RAW_BATCH) return null;
  const wires = cachedWires(s, seqs);
  if (wires.size !== seqs.length) {
    looked.wires = wires; // checkView reads the others, not these again
    return null;
  }
  const ctx = { s, v, items, user: s.user };
  s.socket.cork();
  for (const seq of seqs) {
    const uid = v.uidAt(seq);
    s.untagged([seq, atom('FETCH'), responseItems(ctx, uid, null, wires.get(uid))]);
  }
  if (s.socket.writableLength <= HOLD_BYTES) s.holdOutput();
  else {
    s.socket.uncork();
    if (s.socket.writableNeedDrain) await s.drain();
  }
  return { skipSync: true };
}

/**
 * The items of one FETCH response from a header row and kept metadata, written as wire text:
 * the same bytes responseItems + responseLine write (test/meta.pg.test.js compares them).
 * @param {object} ctx
 * @param {number} uid
 * @param {object} row
 * @param {object} meta
 * @param {WireBuffer} w
 */
function metaItemsWrite(ctx, uid, row, meta, w) {
  let sep = '';
  for (const it of ctx.items) {
    switch (it.name) {
      case 'UID':
        w.text(`${sep}UID ${uid}`);
        break;
      case 'FLAGS':
        if (it.implicit && !it.implicit.has(uid)) continue;
        w.text(`${sep}FLAGS (${flagsText(row, ctx.v.recent)})`);
        break;
      case 'INTERNALDATE':
        // A uid's INTERNALDATE never changes (RFC 3501 2.3.3): its text is memoised.
        if (meta.idateOf !== row.internalDate) {
          meta.idate = imapDate(row.internalDate);
          meta.idateOf = row.internalDate;
        }
        w.text(`${sep}INTERNALDATE "${meta.idate}"`);
        break;
      case 'RFC822.SIZE':
        w.text(`${sep}RFC822.SIZE ${meta.size}`);
        break;
      case 'MODSEQ':
        w.text(`${sep}MODSEQ (${Number(row.modseq)})`);
        break;
      case 'ENVELOPE':
        w.text(`${sep}ENVELOPE `);
        w.text(meta.envelope);
        break;
      case 'BODYSTRUCTURE':
        w.text(`${sep}BODYSTRUCTURE `);
        w.text(meta.bodystructure);
        break;
      case 'BODY':
        w.text(`${sep}BODY `);
        w.text(meta.body);
        break;
      case 'BODY[]':
        if (sep) w.text(sep);
        w.text(headerFieldsItem(meta, it));
        break;
      /* istanbul ignore next: coveredItem admits nothing else */
      default:
        continue;
    }
    sep = ' ';
  }
}

/**
 * A growable byte buffer of latin1 text (one char per byte): responses are copied into it
 * and sent in large slices.
 */
class WireBuffer {
  /** @param {number} size initial bytes */
  constructor(size) {
    this.size = size;
    this.buf = Buffer.allocUnsafe(size);
    this.used = 0;
    // Short pieces are joined as a string first (V8 concatenates without copying) and copied
    // into the buffer PENDING_CHARS at a time: one latin1Write per ~64 KB instead of one per
    // piece, of which a list view has ~8 per message.
    this.pending = '';
  }

  /** Bytes written so far (flushed or pending). */
  get off() {
    return this.used + this.pending.length;
  }

  /** @param {string} t latin1 text */
  text(t) {
    this.pending += t;
    if (this.pending.length >= PENDING_CHARS) this.flush();
  }

  /** Copies the pending text into the buffer. */
  flush() {
    const t = this.pending;
    if (!t) return;
    this.pending = '';
    this.room(t.length);
    this.used += this.buf.latin1Write(t, this.used);
  }

  /** Makes room for n more bytes. */
  room(n) {
    if (this.used + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + n));
    this.buf.copy(next, 0, 0, this.used);
    this.buf = next;
  }

  /**
   * Latin1 text copied straight into the buffer, after any pending text (the packed writer's
   * kept values: one copy, no joined string).
   * @param {string} t
   */
  put(t) {
    if (this.pending) this.flush();
    this.room(t.length);
    this.used += this.buf.latin1Write(t, this.used);
  }

  /** @param {Uint8Array} bytes a few constant bytes, copied one by one (no native call) */
  ascii(bytes) {
    if (this.pending) this.flush();
    this.room(bytes.length);
    const b = this.buf;
    let u = this.used;
    for (let i = 0; i < bytes.length; i++) b[u++] = bytes[i];
    this.used = u;
  }

  /**
   * Characters of `text` in the [from, to) ranges (fieldRanges), as latin1 bytes: each range
   * one native copy of a slice (a view of the text, not a copy of its characters), no joined
   * string. Copied character by character in JavaScript the ranges cost more than the garbage
   * they saved in a new process (profiled, 2026-11-28).
   * @param {string} text latin1 text
   * @param {number[]} ranges from, to, from, to, …
   * @param {number} total characters in all ranges
   */
  ranges(text, ranges, total) {
    if (this.pending) this.flush();
    this.room(total);
    const b = this.buf;
    let u = this.used;
    for (let r = 0; r < ranges.length; r += 2) {
      u += b.latin1Write(text.slice(ranges[r], ranges[r + 1]), u);
    }
    this.used = u;
  }

  /** @param {number} n a non-negative integer (a sequence number, uid, size, modseq) as digits */
  num(n) {
    if (this.pending) this.flush();
    this.room(20);
    const b = this.buf;
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    let p = this.used + digits;
    this.used = p;
    while (n >= 10) {
      const q = Math.floor(n / 10);
      b[--p] = 48 + (n - q * 10);
      n = q;
    }
    b[--p] = 48 + n;
  }

  /** The bytes written so far; writing continues in a fresh buffer. */
  take() {
    this.flush();
    const out = this.buf.subarray(0, this.used);
    this.buf = Buffer.allocUnsafe(this.size);
    this.used = 0;
    return out;
  }
}

const PENDING_CHARS = 64 * 1024;

/**
 * FLAGS of a header row as wire text: flagsOf joined, without the intermediate arrays.
 * @param {object} row
 * @param {Set<number>} recent the session's \Recent uids (view.recent)
 */
function flagsText(row, recent) {
  const f = row.flags || [];
  const k = row.keywords;
  if ((!k || !k.length) && !recent.size) return f.length === 1 ? f[0] : f.join(' ');
  return flagsOf(row, recent).join(' ');
}

function responseItems(ctx, uid, row, raw, meta = null) {
  const out = [];
  let info = null;
  let tree = null;
  const structure = () => {
    if (!info) {
      const key = `${mailboxScope(ctx.user, ctx.v)}\0${uid}`;
      info = cache.get(key);
      if (!info) {
        info = describe(raw);
        cache.set(key, info);
      }
    }
    return info;
  };
  const treeOf = () => tree || (tree = parseTree(raw));
  for (const it of ctx.items) {
    switch (it.name) {
      case 'UID':
        out.push(atom('UID'), uid);
        break;
      case 'FLAGS':
        if (it.implicit && !it.implicit.has(uid)) break;
        out.push(atom('FLAGS'), flagsOf(row, ctx.v.recent).map(atom));
        break;
      case 'INTERNALDATE':
        out.push(atom('INTERNALDATE'), imapDate(row.internalDate));
        break;
      case 'RFC822.SIZE':
        // raw is the CRLF form (runFetch): RFC 3501 2.3.4, the size of what BODY[] sends.
        out.push(atom('RFC822.SIZE'), raw ? raw.length : Number(row.size));
        break;
      case 'MODSEQ':
        out.push(atom('MODSEQ'), [Number(row.modseq)]);
        break;
      case 'ENVELOPE':
        out.push(atom('ENVELOPE'), meta ? atom(meta.envelope) : structure().envelope);
        break;
      case 'BODYSTRUCTURE':
        out.push(
          atom('BODYSTRUCTURE'),
          meta ? atom(meta.bodystructure) : structure().bodystructure,
        );
        break;
      case 'BODY':
        out.push(atom('BODY'), meta ? atom(meta.body) : structure().body);
        break;
      case 'RFC822':
        out.push(atom('RFC822'), literal(raw));
        break;
      case 'RFC822.HEADER':
        out.push(atom('RFC822.HEADER'), literal(raw.subarray(0, treeOf().headerEnd)));
        break;
      case 'RFC822.TEXT':
        out.push(atom('RFC822.TEXT'), literal(raw.subarray(treeOf().headerEnd)));
        break;
      case 'BODY[]': {
        // The whole message needs no MIME tree: parsing one for every BODY[] cost a pass over
        // the bytes per FETCH (most of a cached FETCH's own work, profiled).
        const sec = it.section;
        let data = meta
          ? headerFields(meta.fields, sec.fields)
          : sectionBytes(raw, sec.path.length || sec.part ? treeOf() : null, sec);
        if (it.partial) data = partialOf(data, it.partial);
        out.push(atom(it.label), data === null ? null : literal(data));
        break;
      }
      /* istanbul ignore next: parseItems accepts nothing else */
      default:
        break;
    }
  }
  return out;
}

/**
 * The bytes of a section (root: the message's MIME tree, unused and may be null for the whole
 * message). A part that does not exist, or HEADER/TEXT of a part that is not a
 * message, is the empty string, as Dovecot answers (RFC 3501 leaves it open; NIL made some
 * clients retry).
 */
function sectionBytes(raw, root, sec) {
  if (!sec.path.length && !sec.part) return raw;
  const at = nodeAt(root, sec.path, sec.part);
  if (!at) return EMPTY;
  const { node } = at;
  if (sec.part === 'MIME') return raw.subarray(node.start, node.headerEnd);
  if (!sec.part) return raw.subarray(node.headerEnd, node.end);
  // HEADER and TEXT of a part refer to its encapsulated message (RFC 3501 6.4.5).
  if (!at.message) return EMPTY;
  const msg = node;
  if (sec.part === 'TEXT') return raw.subarray(msg.headerEnd, msg.end);
  const header = raw.subarray(msg.start, msg.headerEnd);
  if (sec.part === 'HEADER') return header;
  const keep = sec.part === 'HEADER.FIELDS';
  const lines = msg.fields.filter((f) => sec.fields.has(f.key) === keep).map((f) => f.line);
  // The blank line that ends a header is part of HEADER.FIELDS (RFC 3501 6.4.5). The section
  // is built, so CRLF throughout, as meta.js headerFieldsText builds it: a message stored with
  // LF gave LF lines then a CRLF blank line.
  lines.push('\r\n');
  return Buffer.from(lines.join('').replace(/\r?\n/g, '\r\n'), 'latin1');
}

const EMPTY = Buffer.alloc(0);

function partialOf(data, [start, len]) {
  if (start >= data.length) return Buffer.alloc(0);
  return data.subarray(start, start + len);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const DAY_MS = 86400000;
// "00".."99": the two-digit fields of a date-time, looked up instead of padded.
const TWO = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));
// "DD-Mon-YYYY " of the days formatted lately, by day number since the epoch: a mailbox's
// messages share few days (the large Enron box: 21,282 messages). Cleared when full, so
// bounded whatever the dates.
const DAY_TEXT = new Map();
const DAY_TEXT_MAX = 4096;

/**
 * date-time of RFC 3501 9: `"17-Jul-1996 02:44:25 +0000"` (UTC). The day part is formatted
 * once per day, the time from a table: field by field (six Date getters and six padStart
 * calls a message) 21,282 INTERNALDATEs (a first ENVELOPE sync of the large mailbox) cost
 * 3.1-6.0 ms of CPU warm (medians; least 3-5.4), 14-22 ms in a new process, against 1.5-4.3
 * (least 0.9-1.4) and 11-19 ms so (issue 35.3;
 * bench/results/imap-cold-listview-2026-11-28/imap-date.txt). The same text as field by field
 * (test/imap-date.test.js compares them).
 * @param {Date|string|number} value
 * @returns {string}
 */
function imapDate(value) {
  const t = value instanceof Date ? value.getTime() : new Date(value).getTime();
  if (Number.isNaN(t)) return '01-Jan-1970 00:00:00 +0000';
  const day = Math.floor(t / DAY_MS);
  let head = DAY_TEXT.get(day);
  if (head === undefined) {
    const d = new Date(day * DAY_MS);
    head = `${TWO[d.getUTCDate()]}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} `;
    if (DAY_TEXT.size >= DAY_TEXT_MAX) DAY_TEXT.clear();
    DAY_TEXT.set(day, head);
  }
  const sec = Math.floor((t - day * DAY_MS) / 1000); // 0..86399
  const min = Math.floor(sec / 60);
  return `${head}${TWO[Math.floor(min / 60)]}:${TWO[min % 60]}:${TWO[sec % 60]} +0000`;
}

/** FETCH (RFC 3501 6.4.5); UID FETCH (uid.js) calls runFetch with byUid. */
module.exports = {
  name: 'FETCH',
  states: ['selected'],
  usesView: true,
  expunges: false,
  readsOnly: true,
  // runFetch checks the selected mailbox itself (with its read of the bytes).
  checksView: true,
  run: (s, cmd) => runFetch(s, cmd.args, false),
  runFetch,
  parseItems,
  parseSection,
  sectionBytes,
  imapDate,
  MONTHS,
};
