'use strict';

/*
 * A new server process's warm-up (issue 35.3): before the server listens, one session of its
 * own, on an in-memory socket, selects the service's synthetic mailbox (service warmUpBackend:
 * messages made in memory, no user's mail, no database) and runs list views and ENVELOPE
 * fetches of it through the same session, command and writer code a client's commands run;
 * meanwhile the service readies two pooled connections (warmUpReads: reads for no user).
 *
 * Why: the first list view of the large Enron mailbox in a new process cost ~130-170 ms of CPU
 * where the same FETCH in a warm process costs ~36 ms in all (profiled,
 * bench/results/imap-cold-listview-2026-11-28b): V8 ran the response path interpreted, with
 * empty inline caches, before compiling it, and a new PostgreSQL backend read its catalogs for
 * the partitioned tables at its first statement on them. Paid here once, before the first
 * client, at a cost to the start time that bench/results/imap-cold-listview-2026-11-28-s8
 * publishes beside the cold figures.
 *
 * Owns the warm-up session and its socket; never touches the server's shared state (sessions,
 * limits, caches: the session runs on a view of the server with caches of its own), never a
 * user's mail. A failing warm-up is logged and the server goes on (warmUp never throws).
 */

const { Duplex } = require('node:stream');
const { Session } = require('./session');
const { ListViewCache } = require('./list-view-cache');

// Who the warm-up session is: a name no user can have (it holds a NUL).
const WARM_UP_USER = '\0warm-up';
// Rounds of the FETCHes below: V8 compiles a function after enough calls (per message, a few
// thousand); three rounds of the synthetic mailbox's 2,048 messages reach its optimizing tiers.
const ROUNDS = 3;
// What mail clients ask for at their first sync, as the bench's raw client and Thunderbird do.
const COMMANDS = [
  'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)',
  'UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)',
  'UID FETCH 1:* (UID RFC822.SIZE FLAGS BODY.PEEK[HEADER.FIELDS (From To Cc Bcc Subject Date Message-ID Priority X-Priority References Newsgroups In-Reply-To Content-Type Reply-To)])',
];
// How long one warm-up command may go unanswered before the warm-up is given up.
const STALL_MS = 30000;
// How long the start waits for the pooled reads (they only help): behind a lock held by a
// migration or VACUUM FULL, or on a stalled PostgreSQL, they may not end for minutes, and the
// server must listen all the same (review finding F3, 2026-11-28). They go on in the
// background; their connections come back to the pool when they end.
const READS_WAIT_MS = 3000;
// The warm-up session's own list-view cache (the server's stays untouched).
const CACHE_BYTES = 16 * 1024 * 1024;

/**
 * An in-memory socket for the warm-up session: what it writes is counted and read for the
 * tagged answers, never sent anywhere.
 */
class WarmUpSocket extends Duplex {
  constructor() {
    super();
    this.bytes = 0;
    this.waiting = null;
  }

  _read() {}

  _write(chunk, enc, cb) {
    this.bytes += chunk.length;
    const w = this.waiting;
    // A tagged answer is written alone (session.tagged): `<tag> <status> …\r\n`.
    if (w && chunk.length > w.tag.length && chunk.toString('latin1', 0, w.tag.length) === w.tag) {
      this.waiting = null;
      w.resolve(chunk.toString('latin1').trim());
    }
    cb();
  }

  /**
   * Sends one command to the session and waits for its tagged answer.
   * @param {Session} s
   * @param {string} tag
   * @param {string} text the command without its tag
   * @returns {Promise<string>} the tagged answer line
   */
  command(s, tag, text) {
    let timer;
    const answered = new Promise((resolve, reject) => {
      this.waiting = { tag: `${tag} `, resolve };
      // A command that never answers must not hold the server's start.
      timer = setTimeout(() => reject(new Error(`warm-up: no answer to ${tag}`)), STALL_MS);
      timer.unref();
    });
    s.receive(Buffer.from(`${tag} ${text}\r\n`, 'latin1'));
    return answered.finally(() => clearTimeout(timer));
  }
}

/** Waits for the warm-up reads at most READS_WAIT_MS; logs when the start stops waiting. */
async function readsOrGiveUp(reads, log) {
  let timer;
  const ended = await Promise.race([
    reads.then(() => true),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), READS_WAIT_MS);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
  if (!ended)
    log.warn({ ms: READS_WAIT_MS }, 'imap: warm-up reads still running; listening without them');
}

/**
 * Runs the warm-up. Never throws: a failure is logged (warn) and the server starts without it.
 * @param {import('./server').ImapServer} server
 * @returns {Promise<{ran: boolean, answers: string[], bytes: number, ms: number}>} the tagged
 *   answers of its commands and the bytes its session wrote (tests, the start log)
 */
async function warmUp(server) {
  const t0 = process.hrtime.bigint();
  const out = { ran: false, answers: [], bytes: 0, ms: 0 };
  const service = server.service;
  if (!service || typeof service.warmUpBackend !== 'function') return out;
  let session = null;
  const reads =
    typeof service.warmUpReads === 'function'
      ? Promise.resolve()
          .then(() => service.warmUpReads())
          .catch((err) => server.log.warn({ err: err.message }, 'imap: warm-up reads failed'))
      : null;
  try {
    const socket = new WarmUpSocket();
    // The server as the session sees it, with caches of its own and no registration: the
    // warm-up leaves nothing in the server's sessions, limits or caches.
    const host = Object.create(server, {
      bodyCache: { value: null },
      listViewCache: { value: new ListViewCache({ maxBytes: CACHE_BYTES }) },
      sessionClosed: { value: () => {} },
      leftPreauth: { value: () => {} },
    });
    session = new Session(host, socket, { secure: false, id: 0 });
    session.state = 'auth';
    session.user = WARM_UP_USER;
    session.backend = service.warmUpBackend();
    session.framer.limits = { ...session.framer.limits, ...session.framerLimits() };
    let n = 0;
    const run = async (text) => {
      const answer = await socket.command(session, `w${n++}`, text);
      out.answers.push(answer);
      if (!/^w\d+ OK /.test(answer)) throw new Error(`warm-up answer: ${answer.slice(0, 120)}`);
    };
    await run('SELECT INBOX');
    for (let r = 0; r < ROUNDS; r++) for (const c of COMMANDS) await run(c);
    out.ran = true;
    out.bytes = socket.bytes;
  } catch (err) {
    server.log.warn({ err: err.message }, 'imap: warm-up failed; serving without it');
  } finally {
    if (session) {
      clearTimeout(session.idleTimer);
      session.cleanup();
    }
    if (reads) await readsOrGiveUp(reads, server.log);
  }
  out.ms = Number(process.hrtime.bigint() - t0) / 1e6;
  server.log.info({ ms: Math.round(out.ms), ran: out.ran }, 'imap: warm-up');
  return out;
}

module.exports = { warmUp, WARM_UP_USER, COMMANDS, ROUNDS };
