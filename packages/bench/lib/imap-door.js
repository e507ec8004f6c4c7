'use strict';

const { parse, compileImap } = require('@mailgate/query');
const { messageKey, KeyMap } = require('./keys');
const { RawImapClient } = require('./raw-imap');
const { imapClient } = require('@mailgate/dovecot');

/*
 * The `imap` door: one adapter for every IMAP server (Dovecot on mbox, Dovecot on Maildir,
 * mailgate's own IMAP server), timed with the same raw client (raw-imap.js). Each timed method
 * returns `ms`, the raw client's figure from the write of the first command to the tagged
 * completion of the last, and the runner records that figure; uids are taken from the kept
 * bytes after the clock. imapflow is used only for untimed set-up (the uid → key map).
 *
 * A server is `{name, start(box) → {host, port, user, password}, stop(), restart() → {note?,
 * endpoint?}, close?()}`: stop() ends the server (a restore starts it again), close() frees all.
 */

/** The two header requests: the full envelope fetch, and a mail client's list view. */
const HEADER_COMMANDS = {
  headers: 'UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)',
  headers_list: 'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)',
};

const MONTHS = 'Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec'.split(' ');
const FLAG_WORDS = {
  seen: ['SEEN', 'UNSEEN'],
  flagged: ['FLAGGED', 'UNFLAGGED'],
  deleted: ['DELETED', 'UNDELETED'],
  answered: ['ANSWERED', 'UNANSWERED'],
  draft: ['DRAFT', 'UNDRAFT'],
};
const STRING_KEYS = ['from', 'to', 'cc', 'subject', 'body', 'text'];
const DATE_KEYS = { sentBefore: 'SENTBEFORE', sentSince: 'SENTSINCE', sentOn: 'SENTON' };

/**
 * An imapflow-style search object (what @mailgate/query's compileImap builds) as RFC 3501
 * 6.4.4 SEARCH keys. Non-ASCII strings go as LITERAL+ literals (RFC 7888) under
 * `CHARSET UTF-8`, which the caller puts in front when `utf8` is set.
 * @param {object} s
 * @returns {{keys: string, utf8: boolean}}
 */
function searchWire(s) {
  let utf8 = false;
  const str = (v) => {
    const t = String(v);
    if (/^[\x20-\x7e]*$/.test(t)) return '"' + t.replace(/[\\"]/g, (c) => '\\' + c) + '"';
    utf8 = true;
    return `{${Buffer.byteLength(t)}+}\r\n${t}`;
  };
  const one = (obj) => {
    const out = [];
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'all') out.push('ALL');
      else if (k === 'uid') out.push(`UID ${v}`);
      else if (STRING_KEYS.includes(k)) out.push(`${k.toUpperCase()} ${str(v)}`);
      else if (FLAG_WORDS[k]) out.push(FLAG_WORDS[k][v ? 0 : 1]);
      else if (DATE_KEYS[k]) {
        const d = new Date(v);
        out.push(
          `${DATE_KEYS[k]} ${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`,
        );
      } else if (k === 'larger' || k === 'smaller') out.push(`${k.toUpperCase()} ${Number(v)}`);
      else if (k === 'not') out.push(`NOT (${one(v)})`);
      else if (k === 'or') {
        const parts = v.map((x) => `(${one(x)})`);
        let acc = parts[parts.length - 1];
        for (let i = parts.length - 2; i >= 0; i--) acc = `OR ${parts[i]} (${acc})`;
        out.push(parts.length === 1 ? parts[0] : acc);
      } else throw new Error(`searchWire: no IMAP key for ${k}`);
    }
    return out.length ? out.join(' ') : 'ALL';
  };
  const keys = one(s);
  return { keys, utf8 };
}

/**
 * The door adapter for one IMAP server (see backends.js for the adapter shape).
 * @param {{name: string, start: Function, stop: Function, restart?: Function}} server
 * @param {{log?: Function}} [ctx]
 */
function imapDoorBackend(server, ctx = {}) {
  let endpoint = null;
  let raw = null;
  let box = null;
  const keys = new KeyMap();

  const connect = async () => {
    raw = new RawImapClient({ host: endpoint.host, port: endpoint.port });
    await raw.connect();
    await raw.login(endpoint.user, endpoint.password);
  };
  const disconnect = async () => {
    if (raw) await raw.logout().catch(() => {});
    raw = null;
  };
  // Untimed: the uid -> comparison key map, read with imapflow (it parses, which is fine here).
  const mapKeys = async () => {
    keys.clear();
    const c = await imapClient(endpoint);
    try {
      await c.mailboxOpen('INBOX', { readOnly: true });
      for await (const m of c.fetch('1:*', { uid: true, source: true })) {
        keys.add(m.uid, messageKey(m.source));
      }
    } finally {
      await c.logout().catch(() => {});
    }
  };
  const fresh = async () => {
    await disconnect();
    await server.stop();
    endpoint = await server.start(box);
    await connect();
    await raw.command('SELECT INBOX');
    await mapKeys();
  };
  const timed = (answers, ids) => ({ ms: answers.reduce((s, a) => s + a.ms, 0), ids });

  return {
    name: server.name,
    door: 'imap',
    wordSearch: false,
    listView: true,
    async load(b) {
      box = b;
      const t0 = process.hrtime.bigint();
      endpoint = await server.start(box);
      let seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      // A server with an index to build first (Dovecot's fts): built here, untimed, reported
      // beside the import. Before the client connects: it may restart the server (new port).
      if (server.prepare) endpoint = (await server.prepare()) || endpoint;
      const t1 = process.hrtime.bigint();
      await connect();
      seconds += Number(process.hrtime.bigint() - t1) / 1e9;
      // Counted without opening the mailbox, which would build the index before firstOpen.
      const st = await raw.command('STATUS INBOX (MESSAGES)');
      const m = /MESSAGES (\d+)/.exec(st.text());
      const extra = server.loadInfo ? server.loadInfo() : null;
      return { seconds, messages: m ? Number(m[1]) : 0, ...(extra ? { extra } : {}) };
    },
    async firstOpen() {
      const a = await raw.command('SELECT INBOX');
      return { ms: a.ms, count: a.exists() };
    },
    async ready() {
      if (server.settle) await server.settle();
      await mapKeys();
    },
    async headers(variant = 'headers') {
      const a = await raw.command(HEADER_COMMANDS[variant]);
      // The list-view variant carries no UID item: its answer is one response per message,
      // in sequence order, which is uid order here (nothing was expunged in between).
      const ids =
        variant === 'headers'
          ? a.uids()
          : [...keys.byUid.keys()].sort((x, y) => x - y).slice(0, a.untagged);
      return timed([a], ids);
    },
    async search(query) {
      const ast = parse(query);
      const { search, exact } = compileImap(ast);
      const { keys: k, utf8 } = searchWire(search);
      const a = await raw.command(`UID SEARCH ${utf8 ? 'CHARSET UTF-8 ' : ''}${k}`);
      let uids = a.uids();
      if (exact) return timed([a], uids);
      // A superset (dates: SENTON is the header's own-zone day): the client narrows it by the
      // envelope dates, as a real client of this server would have to; the fetch is timed,
      // reading the dates out of the kept bytes is not.
      if (ast.type !== 'date' || ast.op !== 'on') {
        throw new Error(`imap door: no client-side narrowing for ${query}`);
      }
      if (!uids.length) return timed([a], uids);
      const f = await raw.command(`UID FETCH ${uids.join(',')} (UID ENVELOPE)`);
      uids = onDay(f.text(), ast.value);
      return timed([a, f], uids);
    },
    async expunge(list) {
      const uids = keys.uidsOf(list);
      const set = uids.join(',');
      const s = await raw.command(`UID STORE ${set} +FLAGS.SILENT (\\Deleted)`);
      const e = await raw.command(`UID EXPUNGE ${set}`);
      const gone = (e.text().match(/^\* \d+ EXPUNGE/gm) || []).length;
      return timed([s, e], gone === uids.length ? uids : uids.slice(0, gone));
    },
    async restore() {
      await fresh();
    },
    async fetchOne(key) {
      const [uid] = keys.uidsOf([key]);
      const a = await raw.command(
        `UID FETCH ${uid} (UID FLAGS BODYSTRUCTURE BODY.PEEK[HEADER] BODY.PEEK[1])`,
      );
      return timed([a], a.uids());
    },
    keysOf(ids) {
      return keys.keysOf(ids);
    },
    async restart() {
      await disconnect();
      const r = (server.restart ? await server.restart() : null) || {};
      if (r.endpoint) endpoint = r.endpoint;
      return {
        note: r.note,
        how: r.how,
        // opts.open false: log in only (the cold first open times the SELECT itself).
        reconnect: async (opts = {}) => {
          await connect();
          if (opts.open !== false) await raw.command('SELECT INBOX');
        },
      };
    },
    async close() {
      await disconnect();
      await server.stop();
      if (server.close) await server.close();
      if (ctx.log) ctx.log(`  ${server.name}: stopped`);
    },
  };
}

/** UIDs whose ENVELOPE date falls on the UTC day `day` (YYYY-MM-DD), from a FETCH answer. */
function onDay(text, day) {
  const out = [];
  for (const m of text.matchAll(/^\* \d+ FETCH \(UID (\d+) ENVELOPE \("([^"]*)"/gm)) {
    const d = new Date(m[2]);
    if (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === day) out.push(Number(m[1]));
  }
  return out;
}

module.exports = { imapDoorBackend, searchWire, HEADER_COMMANDS, onDay };
