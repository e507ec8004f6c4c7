'use strict';

/*
 * SEARCH and UID SEARCH (RFC 3501 6.4.4, RFC 7162 3.1.5 MODSEQ). Keys are parsed into a tree
 * whose leaves are either query-AST terms (@mailgate/query: substring FROM/TO/CC/SUBJECT/
 * BODY/TEXT, flags, dates, sizes — answered by the service, in SQL on pg) or local tests
 * the query language has no term for (sequence and UID sets, KEYWORD, INTERNALDATE dates,
 * MODSEQ: over header rows; HEADER, BCC and SENT*'s Date as written: over the stored bytes).
 * Each maximal AST subtree is one service search; the tree is then evaluated per message of
 * the view, so any mix of AND, OR and NOT keeps RFC 3501 semantics. Never reads SQL or files.
 */

const { atom } = require('../protocol/writer');
const { bad, no } = require('../errors');
const { astring, numberArg } = require('../protocol/args');
const { parseSequenceSet, compileSet } = require('../protocol/sequence');
const { allRows } = require('../mail-data');
const { parseTree } = require('@mailgate/mime/tree');
const { MONTHS } = require('./fetch');
const { bareLfCount } = require('@mailgate/mime/crlf');
const { metaFor } = require('../meta');

const MAX_DEPTH = 64;
// Keys in one SEARCH, nested ones included (issue 29.4: 1,000-key SEARCHes of one user held
// the pool). Past it NO [LIMIT] before anything runs; the service also bounds the substring
// keys of what reaches it (MAILGATE_MAX_SUBSTRING_TERMS).
const MAX_KEYS = 256;
const MAX_MODSEQ = Number.MAX_SAFE_INTEGER;
// Messages read per getRawMany call for tests on the stored bytes.
const RAW_BATCH = 500;
// Envelopes read per metaFor call for SENT* (~0.3 KB each: bounded, one statement on pg).
const META_BATCH = 5000;
// Messages evaluated between two turns of the event loop.
const YIELD_EVERY = 2048;

const FLAG_KEYS = {
  ANSWERED: '\\Answered',
  DELETED: '\\Deleted',
  DRAFT: '\\Draft',
  FLAGGED: '\\Flagged',
  SEEN: '\\Seen',
};
const SUBSTRING_KEYS = {
  BODY: 'body',
  CC: 'cc',
  FROM: 'from',
  SUBJECT: 'subject',
  TEXT: 'text',
  TO: 'to',
};
const SENT_KEYS = { SENTBEFORE: 'before', SENTON: 'on', SENTSINCE: 'after' };
// Days around a SENT* date within which the Date header's own day (as written, in its own
// zone) may differ from its UTC day: a zone offset is at most ±24 h in real mail.
const SENT_BAND_DAYS = 2;
const DAY_MS = 86400000;
// Bytes of a message read to find its Date header for SENT* (the header, not the body).
const DATE_PREFIX = 65536;
const CHARSETS = new Set(['UTF-8', 'US-ASCII']);

const ALL = { kind: 'ast', ast: { type: 'all' } };

/**
 * Parses SEARCH arguments into a key tree.
 * @param {object[]} args tokens
 * @returns {{tree: object, usesModseq: boolean}}
 */
function parseSearch(args) {
  const st = { args, i: 0, usesModseq: false, count: { keys: 0 } };
  if (args[0] && args[0].type === 'atom' && args[0].value.toUpperCase() === 'CHARSET') {
    const cs = astring(args[1], 'charset').toUpperCase();
    if (!CHARSETS.has(cs)) throw no('Unsupported charset', 'BADCHARSET (UTF-8 US-ASCII)');
    st.i = 2;
  }
  const keys = [];
  while (st.i < args.length) keys.push(parseKey(st, 0));
  if (!keys.length) throw bad('SEARCH needs a key');
  return { tree: and(keys), usesModseq: st.usesModseq };
}

/** Whether the row is \Recent to this session (`recent`: its view.recent). */
function isRecent(row, recent) {
  return Boolean(recent && recent.size && recent.has(Number(row.uid)));
}

function and(children) {
  return children.length === 1 ? children[0] : { kind: 'and', children };
}

function next(st, what) {
  const t = st.args[st.i++];
  if (!t) throw bad(`Missing ${what}`);
  return t;
}

function parseKey(st, depth) {
  if (depth > MAX_DEPTH) throw bad('Search too deeply nested');
  const t = next(st, 'search key');
  if (++st.count.keys > MAX_KEYS) throw no(`SEARCH has more than ${MAX_KEYS} keys`, 'LIMIT');
  if (t.type === 'list') {
    const inner = { args: t.value, i: 0, usesModseq: false, count: st.count };
    const keys = [];
    while (inner.i < inner.args.length) keys.push(parseKey(inner, depth + 1));
    if (inner.usesModseq) st.usesModseq = true;
    if (!keys.length) throw bad('Empty search list');
    return and(keys);
  }
  if (t.type !== 'atom') throw bad('Invalid search key');
  const key = t.value.toUpperCase();
  if (/^[\d:*,]+$/.test(key)) {
    // Resolved against the view once per search (compile), never per message.
    return { kind: 'set', uid: false, ranges: seqSet(key) };
  }
  if (FLAG_KEYS[key]) return { kind: 'ast', ast: { type: 'flag', flag: FLAG_KEYS[key] } };
  if (key.startsWith('UN') && FLAG_KEYS[key.slice(2)]) {
    return {
      kind: 'ast',
      ast: { type: 'not', child: { type: 'flag', flag: FLAG_KEYS[key.slice(2)] } },
    };
  }
  if (SUBSTRING_KEYS[key]) {
    const value = astring(next(st, 'search string'), 'search string');
    // RFC 3501 6.4.4: the empty string is a substring of every field.
    if (value === '') return ALL;
    return { kind: 'ast', ast: { type: 'substring', field: SUBSTRING_KEYS[key], value } };
  }
  if (SENT_KEYS[key]) return sentKey(key, searchDate(next(st, 'date')));
  switch (key) {
    case 'ALL':
      return ALL;
    // \Recent is this session's (view.recent, recent.js), passed to local tests as `recent`.
    case 'RECENT':
      return { kind: 'local', test: (row, seq, total, maxUid, recent) => isRecent(row, recent) };
    case 'OLD':
      return { kind: 'local', test: (row, seq, total, maxUid, recent) => !isRecent(row, recent) };
    case 'NEW':
      // RFC 3501 6.4.4: RECENT UNSEEN.
      return {
        kind: 'local',
        test: (row, seq, total, maxUid, recent) =>
          isRecent(row, recent) && !(row.flags || []).includes('\\Seen'),
      };
    case 'NOT':
      return { kind: 'not', child: parseKey(st, depth + 1) };
    case 'OR':
      return { kind: 'or', children: [parseKey(st, depth + 1), parseKey(st, depth + 1)] };
    case 'LARGER':
    case 'SMALLER':
      return sizeKey(key, numberArg(next(st, 'size'), 'size'));
    case 'BEFORE':
    case 'ON':
    case 'SINCE': {
      const day = searchDate(next(st, 'date'));
      return { kind: 'local', test: (row) => compareDay(row.internalDate, day, key) };
    }
    case 'KEYWORD':
    case 'UNKEYWORD': {
      const k = astring(next(st, 'keyword'), 'keyword').toLowerCase();
      const has = (row) =>
        (row.keywords || []).some((x) => x.toLowerCase() === k) ||
        (row.flags || []).some((x) => x.toLowerCase() === k);
      return { kind: 'local', test: key === 'KEYWORD' ? has : (row) => !has(row) };
    }
    case 'UID': {
      return { kind: 'set', uid: true, ranges: seqSet(astring(next(st, 'uid set'), 'uid set')) };
    }
    case 'HEADER': {
      const field = astring(next(st, 'header field'), 'header field').toLowerCase();
      const value = astring(next(st, 'search string'), 'search string').toLowerCase();
      return { kind: 'raw', test: (raw) => headerHas(raw, field, value) };
    }
    case 'BCC': {
      const value = astring(next(st, 'search string'), 'search string').toLowerCase();
      return { kind: 'raw', test: (raw) => headerHas(raw, 'bcc', value) };
    }
    case 'MODSEQ': {
      // MODSEQ [entry-name entry-type-req] mod-sequence-valzer (RFC 7162 3.1.5).
      let t2 = next(st, 'mod-sequence');
      if (t2.type === 'string' || (t2.type === 'atom' && !/^\d+$/.test(t2.value))) {
        next(st, 'entry type');
        t2 = next(st, 'mod-sequence');
      }
      const n = numberArg(t2, 'mod-sequence', MAX_MODSEQ);
      st.usesModseq = true;
      return { kind: 'local', test: (row) => Number(row.modseq) >= n };
    }
    default:
      throw bad(`Unknown search key ${key.slice(0, 30)}`);
  }
}

function seqSet(text) {
  try {
    return parseSequenceSet(text);
  } catch (err) {
    throw bad(err.message);
  }
}

/** `1-Feb-1994` (RFC 3501 9 date) → `1994-02-01`. */
function searchDate(token) {
  const text = astring(token, 'date');
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(text);
  const mon = m ? MONTHS.findIndex((x) => x.toLowerCase() === m[2].toLowerCase()) : -1;
  if (!m || mon < 0) throw bad('Invalid date');
  const iso = `${m[3]}-${String(mon + 1).padStart(2, '0')}-${m[1].padStart(2, '0')}`;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== iso) throw bad('Invalid date');
  return iso;
}

/**
 * LARGER / SMALLER compare RFC822.SIZE (RFC 3501 6.4.4), the size of the CRLF form served
 * (crlf.js), while the stored size counts a bare LF once. As the served size is between the
 * stored size and twice it, the service's size search decides every message but those whose
 * stored size leaves both answers open; their bytes are read and their LFs counted.
 * @param {'LARGER'|'SMALLER'} key
 * @param {number} n
 */
function sizeKey(key, n) {
  const size = (op, value) => ({ kind: 'ast', ast: { type: 'size', op, value } });
  const served = (raw) => raw.length + bareLfCount(raw);
  if (key === 'LARGER') {
    // Stored > n: served > n. Stored <= n/2: served <= n.
    return {
      kind: 'or',
      children: [
        size('larger', n),
        {
          kind: 'and',
          children: [
            size('larger', Math.floor(n / 2)),
            { kind: 'raw', test: (raw) => served(raw) > n },
          ],
        },
      ],
    };
  }
  // Stored < n/2: served < n. Stored >= n: served >= n.
  return {
    kind: 'or',
    children: [
      size('smaller', Math.ceil(n / 2)),
      {
        kind: 'and',
        children: [size('smaller', n), { kind: 'raw', test: (raw) => served(raw) < n }],
      },
    ],
  };
}

/** `YYYY-MM-DD` plus n days. */
function addDays(iso, n) {
  return new Date(Date.parse(`${iso}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/**
 * SENTBEFORE / SENTON / SENTSINCE (RFC 3501 6.4.4) compare the Date header's date *as
 * written*, disregarding time and timezone, as Dovecot does: `Wed, 01 Aug 2018 23:30 -0700` is
 * on 1-Aug-2018 although its UTC day is the 2nd. The stored date is UTC, so the service's date
 * search decides every message whose UTC day is more than SENT_BAND_DAYS away from the asked
 * day; the few within the band, and those without a parsable Date (Dovecot counts them as
 * 1-Jan-1970), are decided by reading their Date header.
 * @param {'SENTBEFORE'|'SENTON'|'SENTSINCE'} key
 * @param {string} day YYYY-MM-DD
 */
function sentKey(key, day) {
  const lo = addDays(day, -SENT_BAND_DAYS);
  const hi = addDays(day, SENT_BAND_DAYS + 1);
  const date = (op, value) => ({ type: 'date', op, value });
  const noDate = { type: 'not', child: date('after', '1000-01-01') };
  // The candidates: a UTC day the written day can be on, or no date at all (a negated date
  // term holds for a NULL date). One range each, which the date index answers; the ranges of
  // several SENT* keys meet in one service search (compile joins an AND's AST children).
  let candidates;
  if (key === 'SENTON') {
    candidates = {
      type: 'or',
      children: [{ type: 'and', children: [date('after', lo), date('before', hi)] }, noDate],
    };
  } else if (key === 'SENTBEFORE') {
    candidates = { type: 'not', child: date('after', hi) };
  } else {
    candidates = { type: 'not', child: date('before', lo) };
  }
  const onDay = (d) => {
    if (key === 'SENTBEFORE') return d < day;
    if (key === 'SENTON') return d === day;
    return d >= day;
  };
  // Every candidate is decided on its written day: from the kept ENVELOPE's date when there
  // is one (`onDay`, runSearch), else from its bytes.
  return {
    kind: 'and',
    children: [
      { kind: 'ast', ast: candidates },
      { kind: 'raw', headerOnly: true, test: (raw) => onDay(writtenDay(raw)), onDay },
    ],
  };
}

/**
 * The day of a message's first Date header as written (RFC 5322 3.3: `[dow,] d mon yyyy`,
 * obsolete two- and three-digit years as RFC 5322 4.3), `1970-01-01` when there is none or it
 * does not parse (Dovecot's answer for such a message).
 * @param {Buffer} raw the message, or its first bytes
 * @returns {string} YYYY-MM-DD
 */
function writtenDay(raw) {
  const field = parseTree(raw).fields.find((f) => f.key === 'date');
  return dayOf(field ? field.line.slice(field.line.indexOf(':') + 1) : null);
}

/**
 * The day of a Date header's value as written (writtenDay), `1970-01-01` when there is none.
 * @param {string|null} value the field's value (after its colon), folded or not
 * @returns {string} YYYY-MM-DD
 */
function dayOf(value) {
  const m =
    value != null &&
    /^\s*(?:[A-Za-z]+\s*,)?\s*(\d{1,2})\s+([A-Za-z]{3})[A-Za-z]*\.?\s+(\d{2,4})\b/.exec(value);
  const mon = m ? MONTHS.findIndex((x) => x.toLowerCase() === m[2].toLowerCase()) : -1;
  if (!m || mon < 0) return '1970-01-01';
  let year = Number(m[3]);
  if (m[3].length === 2) year += year < 50 ? 2000 : 1900;
  else if (m[3].length === 3) year += 1900;
  return `${String(year).padStart(4, '0')}-${String(mon + 1).padStart(2, '0')}-${m[1].padStart(2, '0')}`;
}

/**
 * The written day of a message from its kept ENVELOPE (wire form): the envelope's first value
 * is the first Date header's value, unfolded and trimmed (@mailgate/mime structure.js), or NIL
 * when the message has none; the day read from it is writtenDay's. null when the date was sent
 * as a literal (8-bit or control bytes): the caller reads the message instead.
 * @param {string} envelope
 * @returns {string|null} YYYY-MM-DD
 */
function envelopeDay(envelope) {
  if (envelope.startsWith('(NIL ')) return dayOf(null);
  const m = /^\("((?:[^"\\]|\\.)*)"/.exec(envelope);
  return m ? dayOf(m[1].replace(/\\(.)/g, '$1')) : null;
}

/** INTERNALDATE day comparisons, on the UTC day (RFC 3501: "disregarding time and timezone"). */
function compareDay(value, day, key) {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return false;
  const own = d.toISOString().slice(0, 10);
  if (key === 'BEFORE') return own < day;
  if (key === 'ON') return own === day;
  return own >= day;
}

function headerHas(raw, field, value) {
  const tree = parseTree(raw);
  return tree.fields.some((f) => {
    if (f.key !== field) return false;
    const v = f.line
      .slice(f.line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]/g, ' ')
      .trim();
    return Buffer.from(v, 'latin1').toString('utf8').toLowerCase().includes(value);
  });
}

/** The AST of a subtree made of AST leaves only, else null. */
function toAst(node) {
  if (node.kind === 'ast') return node.ast;
  if (node.kind === 'not') {
    const c = toAst(node.child);
    return c && { type: 'not', child: c };
  }
  if (node.kind === 'and' || node.kind === 'or') {
    const kids = node.children.map(toAst);
    if (kids.some((k) => !k)) return null;
    return { type: node.kind, children: kids };
  }
  return null;
}

/**
 * Runs a search over the selected view.
 * @param {import('./session').Session} s
 * @param {object[]} args
 * @returns {Promise<{seqs: number[], uids: number[], highestModseq: number|null}>}
 */
async function runSearch(s, args) {
  const { tree, usesModseq } = parseSearch(args);
  if (usesModseq) s.condstore = true;
  const v = s.view;
  const be = s.backend;
  const whole = toAst(tree);
  if (whole && !usesModseq) {
    const hit = await searchUids(be, v.name, whole);
    const seqs = [];
    if (hit.size * 16 < v.uids.length) {
      // Few hits (a rare word, one sender): a binary search each instead of a pass over the view.
      for (const u of hit) {
        const n = v.seqOf(u);
        if (n) seqs.push(n);
      }
      seqs.sort((a, b) => a - b);
    } else {
      for (let i = 0; i < v.uids.length; i++) if (hit.has(v.uids[i])) seqs.push(i + 1);
    }
    return { seqs, uids: seqs.map((n) => v.uids[n - 1]), highestModseq: null };
  }
  // Mixed tree: resolve each maximal AST subtree once, then evaluate per message. Tests on the
  // stored bytes (HEADER, BCC, SENT*'s Date) are unknown in a first pass over the rows; only
  // the messages whose answer depends on them are read, RAW_BATCH at a time.
  const maxUid = v.uids.length ? v.uids[v.uids.length - 1] : 0;
  const compiled = await compile(tree, be, v.name, { total: v.total, maxUid });
  // The messages' list rows, unless no test reads them: AST subtrees are uid sets, and a tree
  // of those and SENT* tests (a date search) needs no pass over the whole mailbox's rows.
  const rows = rowTests(tree) ? new Map() : null;
  if (rows) {
    for (const row of await allRows(be, v.name, s.knownStatus())) rows.set(Number(row.uid), row);
  }
  const raws = rawNodes(tree);
  const prefix = raws.every((n) => n.headerOnly) ? DATE_PREFIX : undefined;
  const hits = [];
  let undecided = [];
  // Every hit is in the uid set an AND's service search answered (a date search's band):
  // only those messages are evaluated, not the whole view. Else every message of the view.
  const only = rows ? null : uidsOfAnd(compiled);
  const candidates = only ? [...only].map((u) => v.seqOf(u)).filter((n) => n > 0) : null;
  const count = candidates ? candidates.length : v.uids.length;
  for (let k = 0; k < count; k++) {
    // A long evaluation gives other sessions a turn of the event loop now and then.
    if (k % YIELD_EVERY === 0 && k > 0) await new Promise((r) => setImmediate(r));
    const i = candidates ? candidates[k] - 1 : k;
    const row = rows ? rows.get(v.uids[i]) : { uid: v.uids[i] };
    if (!row) continue;
    const env = { row, seq: i + 1, total: v.total, maxUid, raw: undefined, recent: v.recent };
    const r = evaluate(compiled, env);
    if (r === true) hits.push(env);
    else if (r === null) undecided.push(env);
  }
  const caps = be.capabilities;
  if (undecided.length && raws.every((n) => n.onDay) && caps && caps.has('getImapMeta')) {
    // SENT* only: the written day is in the kept ENVELOPE (one narrow read for all), so the
    // bytes are read only for the few whose date was kept as a literal or not kept at all.
    undecided = await decideByEnvelope(s, compiled, undecided, hits);
  }
  for (let c = 0; c < undecided.length; c += RAW_BATCH) {
    const batch = undecided.slice(c, c + RAW_BATCH);
    const raws = await be.getRawMany(
      v.name,
      batch.map((e) => Number(e.row.uid)),
      { prefix },
    );
    for (const env of batch) {
      env.raw = raws.get(Number(env.row.uid)) || null;
      if (evaluate(compiled, env) === true) hits.push(env);
    }
  }
  hits.sort((a, b) => a.seq - b.seq);
  const seqs = hits.map((e) => e.seq);
  // Rows are read whenever MODSEQ is asked (rowTests).
  const highest = hits.reduce((m, e) => Math.max(m, Number(e.row.modseq) || 0), 0);
  return { seqs, uids: seqs.map((n) => v.uids[n - 1]), highestModseq: usesModseq ? highest : null };
}

/**
 * Messages the first pass left undecided, decided by their written day read from the kept
 * ENVELOPE (metaFor, envelopes only); hits are added to `hits`.
 * @param {import('../session').Session} s
 * @param {object} compiled
 * @param {object[]} undecided evaluation environments
 * @param {object[]} hits
 * @returns {Promise<object[]>} those still undecided (no kept envelope, or a literal date)
 */
async function decideByEnvelope(s, compiled, undecided, hits) {
  const still = [];
  for (let c = 0; c < undecided.length; c += META_BATCH) {
    const batch = undecided.slice(c, c + META_BATCH);
    const metas = await metaFor(
      s.backend,
      s.view,
      s.user,
      batch.map((e) => Number(e.row.uid)),
      ['envelope'],
    );
    for (const env of batch) {
      const meta = metas.get(Number(env.row.uid));
      const day = meta && meta.envelope ? envelopeDay(meta.envelope) : null;
      if (day === null) {
        still.push(env);
        continue;
      }
      env.day = day;
      if (evaluate(compiled, env) === true) hits.push(env);
    }
  }
  return still;
}

/**
 * The smallest uid set among an AND's children answered by a service search (compile's
 * `uids`), which every hit of the AND is in; null when the tree is not such an AND.
 * @param {object} compiled
 * @returns {Set<number>|null}
 */
function uidsOfAnd(compiled) {
  if (compiled.kind !== 'and') return null;
  let best = null;
  for (const c of compiled.children) {
    if (c.uids && (!best || c.uids.size < best.size)) best = c.uids;
  }
  return best;
}

/**
 * Whether a key tree has a test that reads a message's list row (flags, dates, keywords,
 * MODSEQ…): every local leaf does; AST leaves become uid sets, raw leaves read the bytes.
 */
function rowTests(node) {
  if (node.kind === 'local') return true;
  if (node.child && rowTests(node.child)) return true;
  return (node.children || []).some(rowTests);
}

/** The raw-test leaves of a key tree. */
function rawNodes(node, out = []) {
  if (node.kind === 'raw') out.push(node);
  if (node.child) rawNodes(node.child, out);
  for (const c of node.children || []) rawNodes(c, out);
  return out;
}

/**
 * The tree made ready for evaluation: AST subtrees answered by the service (one search each),
 * sequence and UID sets resolved against the view (`*`: its last message or highest uid).
 * @param {{total: number, maxUid: number}} view
 */
async function compile(node, be, mailbox, view) {
  if (node.kind === 'set') {
    const set = compileSet(node.ranges, node.uid ? view.maxUid : view.total);
    return node.uid
      ? { kind: 'local', test: (row) => set.has(Number(row.uid)) }
      : { kind: 'local', test: (row, seq) => set.has(seq) };
  }
  const ast = toAst(node);
  if (ast) {
    if (ast.type === 'all') return { kind: 'local', test: () => true };
    const set = await searchUids(be, mailbox, ast);
    // `uids`: the set itself, for runSearch's candidates (uidsOfAnd).
    return { kind: 'local', test: (row) => set.has(Number(row.uid)), uids: set };
  }
  if (node.kind === 'not')
    return { kind: 'not', child: await compile(node.child, be, mailbox, view) };
  if (node.kind === 'and') {
    // Nested ANDs flattened, and their AST children answered by one service search (their
    // AND): SENTSINCE and SENTBEFORE's ranges meet there instead of each listing its uids.
    const flat = [];
    const flatten = (n) => (n.kind === 'and' ? n.children.forEach(flatten) : flat.push(n));
    flatten(node);
    const asts = flat.map(toAst);
    const rest = flat.filter((c, i) => !asts[i] || asts[i].type === 'all');
    const joined = asts.filter((a) => a && a.type !== 'all');
    const children = [];
    if (joined.length) {
      const ast = joined.length === 1 ? joined[0] : { type: 'and', children: joined };
      children.push(await compile({ kind: 'ast', ast }, be, mailbox, view));
    }
    for (const c of rest) children.push(await compile(c, be, mailbox, view));
    return { kind: 'and', children };
  }
  if (node.kind === 'or') {
    const children = [];
    for (const c of node.children) children.push(await compile(c, be, mailbox, view));
    return { kind: node.kind, children };
  }
  return node;
}

/**
 * A key tree's answer for one message: true, false, or null while a test on the stored bytes
 * it depends on has not been read yet (env.raw undefined; null: the message is gone).
 */
function evaluate(node, env) {
  switch (node.kind) {
    case 'local':
      return node.test(env.row, env.seq, env.total, env.maxUid, env.recent);
    case 'raw':
      if (node.onDay && env.day !== undefined) return node.onDay(env.day);
      if (env.raw === undefined) return null;
      return env.raw ? node.test(env.raw) : false;
    case 'not': {
      const c = evaluate(node.child, env);
      return c === null ? null : !c;
    }
    case 'and': {
      let unknown = false;
      for (const c of node.children) {
        const r = evaluate(c, env);
        if (r === false) return false;
        if (r === null) unknown = true;
      }
      return unknown ? null : true;
    }
    case 'or': {
      let unknown = false;
      for (const c of node.children) {
        const r = evaluate(c, env);
        if (r === true) return true;
        if (r === null) unknown = true;
      }
      return unknown ? null : false;
    }
    /* istanbul ignore next */
    default:
      return false;
  }
}

/** Uids matching an AST in one mailbox, through the service's search (all pages). */
async function searchUids(be, mailbox, ast) {
  const out = new Set();
  if (ast.type === 'all') {
    for (const row of await allRows(be, mailbox)) out.add(Number(row.uid));
    return out;
  }
  // `mailboxes` lists every hit whatever the page; limit 0 skips the page's header rows.
  const r = await be.search(ast, { mailbox, limit: 0 });
  for (const m of r.mailboxes || []) {
    if (m.mailbox === mailbox) for (const u of m.uids) out.add(Number(u));
  }
  return out;
}

/**
 * Sends the SEARCH response.
 * @param {import('./session').Session} s
 * @param {{seqs: number[], uids: number[], highestModseq: number|null}} result
 * @param {boolean} byUid
 */
function sendSearch(s, result, byUid) {
  const list = byUid ? result.uids : result.seqs;
  const parts = [atom('SEARCH')];
  // One atom for the numbers: a 21,282-hit answer is one string, not 21,282 values.
  if (list.length) parts.push(atom(list.join(' ')));
  if (result.highestModseq !== null && list.length)
    parts.push([atom('MODSEQ'), result.highestModseq]);
  s.untagged(parts);
}

/** SEARCH (RFC 3501 6.4.4); UID SEARCH (uid.js) calls runSearch and sendSearch with byUid. */
module.exports = {
  name: 'SEARCH',
  states: ['selected'],
  usesView: true,
  expunges: false,
  readsOnly: true,
  async run(s, cmd) {
    sendSearch(s, await runSearch(s, cmd.args), false);
  },
  parseSearch,
  runSearch,
  sendSearch,
  searchDate,
  toAst,
};
