'use strict';

/*
 * The warm-up of a new server process (issue 35.3): what a process does once at start so that
 * its first list view or ENVELOPE fetch does not pay for a cold process. Measured on the large
 * Enron mailbox (bench/results/imap-cold-listview-2026-11-28-s8): a new IMAP process spent
 * ~130-170 ms of CPU on its first list view where a warm one spends ~36 ms in all, most of it
 * V8 running the response path interpreted before it compiles it, and a new PostgreSQL
 * backend's first statement on the partitioned tables.
 *
 * Owns the synthetic mailbox the IMAP server's warm-up session reads (WarmUpBackend: messages
 * made here, in memory, shaped as the pg backend answers) and the readiness of the pool's
 * connections (store warmImapReads: reads for user id 0, which no user has). Must never read
 * or write a user's mail, nor write anything at all.
 */

const { errors } = require('@mailgate/core');
const { deriveMeta } = require('@mailgate/mime/imap-meta');
const { packImapRows } = require('@mailgate/store');

/** Messages of the synthetic mailbox: past the IMAP server's packed-read threshold (256). */
const MESSAGES = 2048;
// Uids per packed row, as the store packs them (imap-meta-ops.js CHUNK_UIDS).
const CHUNK_UIDS = 512;
const NAME = 'INBOX';
const CAPABILITIES = new Set([
  'status',
  'scanList',
  'claimRecent',
  'changesSince',
  'getImapMeta',
  'getImapFieldsRange',
]);

/**
 * A few messages of the shapes a list view meets (plain ASCII, 8-bit header bytes without a
 * charset, an encoded word, folded recipients, a missing Subject, a MIME tree), made here.
 * @returns {Buffer[]}
 */
function templates() {
  const rows = [
    [
      'Date: Mon, 14 May 2001 16:39:00 -0700 (PDT)',
      'From: a.sender@example.org',
      'To: one@example.org',
      'Subject: Warm-up message',
      'Message-ID: <warm.1@example.org>',
    ],
    [
      'Date: Tue, 2 Oct 2001 09:02:11 +0200',
      'From: "Ren\u00e9 M\u00fcller" <rene@example.net>',
      'To: two@example.org,',
      '\tthree@example.org, four@example.org',
      'Cc: five@example.org',
      'Subject: =?ISO-8859-1?Q?R=E9union_d=27=E9quipe?=',
      'Content-Type: text/plain; charset=iso-8859-1',
    ],
    [
      'Date: Wed, 31 Dec 1969 23:59:59 +0000',
      'From: <no-subject@example.com>',
      'Reply-To: list@example.com',
      'In-Reply-To: <warm.1@example.org>',
      'References: <warm.0@example.org>',
      '\t<warm.1@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
    ],
  ];
  return rows.map((h, i) =>
    Buffer.from(
      `${h.join('\r\n')}\r\n\r\n${i === 2 ? '--b\r\n\r\npart\r\n--b--\r\n' : `body ${i}\r\n`}`,
      'latin1',
    ),
  );
}

/**
 * The synthetic mailbox behind the IMAP server's warm-up session: MESSAGES messages cycling
 * through templates(), their kept values derived by the same function the import uses
 * (@mailgate/mime deriveMeta) and packed by the same code the store packs its reads with
 * (packImapRows), list rows shaped as scanList's. Answers the reads a SELECT and a FETCH of a
 * list view or of ENVELOPEs make, from memory; declares nothing else.
 */
class WarmUpBackend {
  constructor() {
    this.kind = 'warm-up';
    this.capabilities = CAPABILITIES;
    const metas = templates().map(deriveMeta);
    const day = Date.UTC(2001, 4, 14);
    const rows = [];
    this.metas = [];
    for (let uid = 1; uid <= MESSAGES; uid++) {
      const m = metas[uid % metas.length];
      this.metas.push(m);
      rows.push(
        Object.freeze({
          uid,
          flags: uid % 3 ? ['\\Seen'] : [],
          keywords: uid % 7 ? [] : ['$Label1'],
          internalDate: new Date(day + uid * 3601000).toISOString(),
          size: m.size,
          modseq: uid + 1,
        }),
      );
    }
    this.rows = Object.freeze(rows);
  }

  async status(mailbox) {
    this.mailbox(mailbox);
    return {
      name: NAME,
      identity: 'warm-up',
      recentFrom: MESSAGES + 1,
      uidvalidity: 1,
      uidnext: MESSAGES + 1,
      highestModseq: MESSAGES + 1,
    };
  }

  async scanList(mailbox) {
    this.mailbox(mailbox);
    return this.rows;
  }

  async claimRecent() {
    return { from: MESSAGES + 1, to: MESSAGES + 1 };
  }

  async changesSince() {
    return { changed: [], expunged: [], highestModseq: MESSAGES + 1 };
  }

  async getImapMeta(mailbox, uids) {
    this.mailbox(mailbox);
    const out = new Map();
    for (const uid of uids) if (uid >= 1 && uid <= MESSAGES) out.set(uid, this.metas[uid - 1]);
    return out;
  }

  /**
   * The packed read (pg-backend getImapFieldsRange): rows of CHUNK_UIDS uids as the store's
   * statement answers them, packed by the store's own code.
   */
  async getImapFieldsRange(mailbox, lo, hi, part = 'fields', opts = {}) {
    this.mailbox(mailbox);
    const groups = new Map();
    for (let uid = Math.max(1, lo); uid <= Math.min(hi, MESSAGES); uid++) {
      const k = Math.floor(uid / CHUNK_UIDS);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { uids: [], sizes: [], lens: [], text: [] }));
      const m = this.metas[uid - 1];
      const value = m[part];
      g.uids.push(uid);
      g.sizes.push(m.size);
      g.lens.push(Buffer.byteLength(value, 'utf8'));
      g.text.push(value);
    }
    const rows = [...groups].map(([k, g]) => ({
      k: String(k),
      n: String(g.uids.length),
      uids: g.uids.join(','),
      sizes: g.sizes.join(','),
      lens: g.lens.join(','),
      text: g.text.join(''),
    }));
    if (!opts.onPart) return packImapRows(rows);
    // In parts, one per row, as the store hands them over (imap-meta-ops.js partsAsRead).
    for (const row of rows) await opts.onPart(packImapRows([row]));
    return undefined;
  }

  /** MAILBOX_NOT_FOUND for anything but the one mailbox (the warm-up asks for no other). */
  mailbox(name) {
    if (name !== NAME) throw new errors.MAILBOX_NOT_FOUND(String(name));
  }

  async close() {}
}

module.exports = { WarmUpBackend, MESSAGES, NAME };
