'use strict';

/*
 * SELECT and EXAMINE (RFC 3501 6.3.1/6.3.2) with the CONDSTORE and QRESYNC parameters
 * (RFC 7162 3.1.8, 3.2.5): builds the session's view of the mailbox and sends its state.
 */

const { atom } = require('../protocol/writer');
const { bad } = require('../errors');
const { arity, mailboxArg, atomArg, listArg, numberArg } = require('../protocol/args');
const { MailboxView, internUids } = require('../view');
const { allRows, rowsFor, flagsOf } = require('../mail-data');
const { noteRecent } = require('../recent');
const { SYSTEM_FLAGS, learn, sendFlags } = require('../keywords');
const { parseSequenceSet, compileSet, formatSet } = require('../protocol/sequence');

const FLAGS = SYSTEM_FLAGS;
const MAX_MODSEQ = Number.MAX_SAFE_INTEGER;

/**
 * @param {import('./session').Session} s
 * @param {object} cmd
 * @param {boolean} readOnly
 */
async function select(s, cmd, readOnly) {
  arity(cmd, 1, 2);
  const name = mailboxArg(cmd.args[0]);
  const opts = selectParams(cmd.args[1], s);
  // Leaving the old mailbox first: a failed SELECT leaves the session authenticated
  // (RFC 3501 6.3.1).
  if (s.view) {
    s.view = null;
    s.state = 'auth';
    if (s.enabled.has('QRESYNC')) s.untagged([atom('OK [CLOSED] Previous mailbox closed')]);
  }
  const be = s.backend;
  // No counts: EXISTS is the view's length. A count would also have the service load every
  // full header row of the mailbox in the background (for a webmail list that never comes),
  // a whole-mailbox read beside this session's next command.
  const status = await be.status(name, { counts: false });
  // The rows at the state the status just read (`known`): a view the service has cached at
  // that state costs no second read of the mailbox row.
  const rows = await allRows(be, name, status);
  const basis = basisOf(rows);
  const view = new MailboxView({
    name,
    readOnly,
    uidvalidity: Number(status.uidvalidity),
    identity: status.identity,
    uidnext: Number(status.uidnext),
    highestModseq: Number(status.highestModseq || 1),
    uids: basis.uids,
  });
  // FLAGS names every keyword in use (RFC 3501 7.2.6): a client meeting one in a FETCH that
  // FLAGS did not list takes it for a server error. A copy: the view learns more later.
  view.keywords = new Map(basis.keywords);
  // SELECT claims the messages no session was told of (\Recent); EXAMINE only looks.
  await noteRecent(s, view, view.uids, status);
  if (opts.condstore) s.condstore = true;
  sendFlags(s, view);
  s.untagged([view.total, atom('EXISTS')]);
  s.untagged([view.recent.size, atom('RECENT')]);
  s.untagged([atom(`OK [UIDVALIDITY ${view.uidvalidity}] UIDs valid`)]);
  s.untagged([atom(`OK [UIDNEXT ${view.uidnext}] Predicted next UID`)]);
  s.untagged([atom(`OK [HIGHESTMODSEQ ${view.modseq}] Highest`)]);
  if (opts.qresync && opts.qresync.uidvalidity === view.uidvalidity) {
    await qresync(s, view, opts.qresync);
  }
  s.view = view;
  s.state = 'selected';
  return { code: readOnly ? 'READ-ONLY' : 'READ-WRITE', text: `${cmd.name} completed` };
}

// What a SELECT derives from a mailbox's list rows (its uids, the keywords in use), per rows
// array. The pg store's list cache returns the same frozen array while the mailbox is unchanged
// (store list-cache.js rowsOf), so a re-SELECT, or another session's SELECT, of an unchanged
// mailbox makes no pass over its rows: on 21,282 messages those passes were most of a
// re-SELECT's CPU (the keywords' alone ~0.2 ms; issue 35, bench/results/imap-fetch-floor-2026-11-28).
// The rows are a ReadonlyArray by the service's contract (scanList: never changed once
// returned); held weakly, gone with the array. Backends that build new rows per call miss.
const bases = new WeakMap();

/**
 * @param {ReadonlyArray<{uid: number|string, keywords?: string[]|null}>} rows in uid order
 * @returns {{uids: Uint32Array, keywords: Map<string, string>}} shared: never change them
 */
function basisOf(rows) {
  let b = bases.get(rows);
  if (b) return b;
  const uids = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) uids[i] = Number(rows[i].uid);
  const keywords = new Map();
  learn(
    { keywords },
    rows.map((r) => r.keywords),
  );
  b = { uids: internUids(uids), keywords };
  bases.set(rows, b);
  return b;
}

/** `(CONDSTORE)` or `(QRESYNC (uidvalidity modseq [known-uids]))`. */
function selectParams(token, s) {
  const out = { condstore: false, qresync: null };
  if (!token) return out;
  const items = listArg(token, 'select parameters');
  for (let i = 0; i < items.length; i++) {
    const key = atomArg(items[i], 'select parameter');
    if (key === 'CONDSTORE') out.condstore = true;
    else if (key === 'QRESYNC') {
      if (!s.enabled.has('QRESYNC')) throw bad('QRESYNC not enabled');
      const p = listArg(items[++i], 'QRESYNC parameters');
      if (p.length < 2) throw bad('Invalid QRESYNC parameters');
      out.qresync = {
        uidvalidity: numberArg(p[0], 'uidvalidity'),
        modseq: numberArg(p[1], 'mod-sequence', MAX_MODSEQ),
        known: p[2] && p[2].type === 'atom' ? parseSet(p[2].value) : null,
      };
      out.condstore = true;
    } else throw bad(`Unknown select parameter ${key}`);
  }
  return out;
}

function parseSet(text) {
  try {
    return parseSequenceSet(text);
  } catch (err) {
    throw bad(err.message);
  }
}

/** RFC 7162 3.2.5.2: VANISHED (EARLIER) for expunged known uids, FETCH for changed ones. */
async function qresync(s, view, q) {
  const changes = await s.backend.changesSince(view.name, q.modseq);
  let vanished = (changes.expunged || []).map(Number);
  if (q.known) {
    const known = compileSet(q.known, Infinity); // merged once, not per expunged uid
    vanished = vanished.filter((u) => known.has(u));
  }
  vanished = vanished.filter((u) => !view.seqOf(u));
  if (vanished.length) s.untagged([atom('VANISHED'), [atom('EARLIER')], atom(formatSet(vanished))]);
  const changed = (changes.changed || []).map((c) => Number(c.uid)).filter((u) => view.seqOf(u));
  if (!changed.length) return;
  const rows = await rowsFor(
    s.backend,
    view.name,
    changed.sort((a, b) => a - b),
  );
  for (const uid of changed) {
    const row = rows.get(uid);
    if (!row) continue;
    s.untagged([
      view.seqOf(uid),
      atom('FETCH'),
      [
        atom('UID'),
        uid,
        atom('FLAGS'),
        flagsOf(row, view.recent).map(atom),
        atom('MODSEQ'),
        [Number(row.modseq)],
      ],
    ]);
  }
}

/** SELECT opens a mailbox read-write; EXAMINE (6.3.2) read-only (no STORE, EXPUNGE, implicit \Seen). */
module.exports = {
  name: ['SELECT', 'EXAMINE'],
  states: ['auth', 'selected'],
  sync: false,
  run: (s, cmd) => select(s, cmd, cmd.name === 'EXAMINE'),
  select,
  FLAGS,
};
