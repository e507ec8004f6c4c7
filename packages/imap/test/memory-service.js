'use strict';

/*
 * A small in-memory mail service with the @mailgate/service contract, for protocol tests that
 * need no database (framing, states, responses). Searches evaluate the query AST over the raw
 * bytes. The real store is exercised by the *.pg.test.js files.
 */

const { verifyPassword, hashPassword } = require('@mailgate/core');

class MemoryService {
  constructor() {
    this.users = new Map();
    this.nextValidity = 1000;
    const self = this;
    this.users.verifyLogin = async (user, password) => {
      const u = self.users.get(user);
      if (!u || !(await verifyPassword(password, u.hash))) {
        const { errors } = require('@mailgate/core');
        throw new errors.INVALID_CREDENTIALS();
      }
      return { name: user };
    };
  }

  async addUser(name, password) {
    const u = { hash: await hashPassword(password), boxes: new Map(), subs: new Set(['INBOX']) };
    this.users.set(name, u);
    this.box(u, 'INBOX');
    return u;
  }

  box(u, name) {
    if (!u.boxes.has(name)) {
      u.boxes.set(name, {
        name,
        uidvalidity: this.nextValidity++,
        uidnext: 1,
        modseq: 1,
        msgs: new Map(),
        expunged: new Map(),
        specialUse: /^(sent|trash|drafts|junk)$/i.test(name)
          ? `\\${name[0].toUpperCase()}${name.slice(1).toLowerCase()}`
          : null,
      });
    }
    return u.boxes.get(name);
  }

  async openBackend(kind, user) {
    const u = this.users.get(user);
    if (!u) throw Object.assign(new Error('no user'), { code: 'USER_NOT_FOUND' });
    return new MemoryBackend(this, u);
  }
}

function notFound(name) {
  const { errors } = require('@mailgate/core');
  return new errors.MAILBOX_NOT_FOUND(name);
}

class MemoryBackend {
  constructor(service, u) {
    this.service = service;
    this.u = u;
    this.kind = 'memory';
  }

  get(name) {
    const b = this.u.boxes.get(name);
    if (!b) throw notFound(name);
    return b;
  }

  bump(b) {
    b.modseq += 1;
    return b.modseq;
  }

  async listMailboxes() {
    return [...this.u.boxes.values()].map((b) => ({
      ...this.statusOf(b),
      specialUse: b.specialUse,
      subscribed: this.u.subs.has(b.name),
    }));
  }

  statusOf(b) {
    const msgs = [...b.msgs.values()];
    return {
      name: b.name,
      total: msgs.length,
      unseen: msgs.filter((m) => !m.flags.includes('\\Seen')).length,
      recent: 0,
      uidvalidity: b.uidvalidity,
      uidnext: b.uidnext,
      highestModseq: b.modseq,
    };
  }

  async status(name) {
    return this.statusOf(this.get(name));
  }

  row(m) {
    return {
      uid: m.uid,
      flags: m.flags.filter((f) => f.startsWith('\\')),
      keywords: m.flags.filter((f) => !f.startsWith('\\')),
      internalDate: m.internalDate.toISOString(),
      size: m.raw.length,
      modseq: m.modseq,
    };
  }

  async scan(name, { order = 'asc', cursor, limit = Infinity } = {}) {
    const b = this.get(name);
    let rows = [...b.msgs.values()].sort((x, y) => x.uid - y.uid);
    if (order === 'desc') rows.reverse();
    const start = cursor ? Number(cursor) : 0;
    const page = rows.slice(start, start + limit).map((m) => this.row(m));
    return {
      rows: page,
      total: rows.length,
      nextCursor: start + limit < rows.length ? String(start + limit) : null,
    };
  }

  async *scanStream(name) {
    const b = this.get(name);
    for (const m of [...b.msgs.values()].sort((x, y) => x.uid - y.uid)) yield this.row(m);
  }

  async getRaw(name, uid) {
    const m = this.get(name).msgs.get(Number(uid));
    if (!m) {
      const { errors } = require('@mailgate/core');
      throw new errors.MESSAGE_NOT_FOUND(String(uid));
    }
    return m.raw;
  }

  async getRawMany(name, uids, { prefix } = {}) {
    const b = this.get(name);
    const out = new Map();
    for (const uid of uids) {
      const m = b.msgs.get(Number(uid));
      if (m) out.set(m.uid, prefix ? m.raw.subarray(0, prefix) : m.raw);
    }
    return out;
  }

  async search(ast, { mailbox }) {
    const b = this.get(mailbox);
    const uids = [...b.msgs.values()]
      .filter((m) => matches(ast, m))
      .map((m) => m.uid)
      .sort((x, y) => x - y);
    return { total: uids.length, mailboxes: [{ mailbox, uids }], rows: [], nextCursor: null };
  }

  async setFlags(name, uids, add, remove) {
    const b = this.get(name);
    const out = [];
    let modseq = null;
    for (const uid of uids) {
      const m = b.msgs.get(Number(uid));
      if (!m) continue;
      const before = m.flags.join(' ');
      const next = new Set(m.flags);
      for (const f of add) next.add(f);
      for (const f of remove) next.delete(f);
      m.flags = [...next].sort();
      if (m.flags.join(' ') !== before) {
        if (modseq === null) modseq = this.bump(b);
        m.modseq = modseq;
        out.push({ uid: m.uid, ...this.row(m) });
      }
    }
    return { matched: uids.length, changed: out, highestModseq: b.modseq };
  }

  async expunge(name, uids) {
    const b = this.get(name);
    const gone = [];
    for (const m of [...b.msgs.values()]) {
      if (!m.flags.includes('\\Deleted')) continue;
      if (uids && !uids.map(Number).includes(m.uid)) continue;
      gone.push(m.uid);
    }
    if (gone.length) {
      const modseq = this.bump(b);
      for (const uid of gone) {
        b.msgs.delete(uid);
        b.expunged.set(uid, modseq);
      }
    }
    return { expunged: gone.sort((x, y) => x - y), highestModseq: b.modseq };
  }

  async append(name, raw, { flags = [], internalDate } = {}) {
    const b = this.get(name);
    const uid = b.uidnext++;
    b.msgs.set(uid, {
      uid,
      raw: Buffer.from(raw),
      flags: [...flags].sort(),
      internalDate: internalDate || new Date(),
      modseq: this.bump(b),
    });
    return { uid, uidvalidity: b.uidvalidity };
  }

  async copy(name, uids, target, move = false) {
    const src = this.get(name);
    const dst = this.get(target);
    const map = [];
    for (const uid of uids.map(Number)) {
      const m = src.msgs.get(uid);
      if (!m) continue;
      const r = await this.append(target, m.raw, { flags: m.flags, internalDate: m.internalDate });
      map.push([uid, r.uid]);
    }
    if (move && map.length) {
      const modseq = this.bump(src);
      for (const [uid] of map) {
        src.msgs.delete(uid);
        src.expunged.set(uid, modseq);
      }
    }
    return { uidvalidity: dst.uidvalidity, map };
  }

  async move(name, uids, target) {
    return this.copy(name, uids, target, true);
  }

  async createMailbox(name) {
    this.service.box(this.u, name);
  }

  async renameMailbox(from, to) {
    const b = this.get(from);
    this.u.boxes.delete(from);
    b.name = to;
    this.u.boxes.set(to, b);
  }

  async deleteMailbox(name) {
    this.get(name);
    this.u.boxes.delete(name);
  }

  async subscribe(name) {
    this.u.subs.add(name);
  }

  async unsubscribe(name) {
    this.u.subs.delete(name);
  }

  async listSubscriptions() {
    return [...this.u.subs];
  }

  async changesSince(name, modseq) {
    const b = this.get(name);
    const changed = [...b.msgs.values()]
      .filter((m) => m.modseq > modseq)
      .map((m) => ({ uid: m.uid, ...this.row(m) }));
    const expunged = [...b.expunged].filter(([, ms]) => ms > modseq).map(([uid]) => uid);
    return { highestModseq: b.modseq, changed, expunged };
  }

  async close() {}
}

/** AST evaluation over raw bytes: enough for protocol tests (not the store's semantics). */
function matches(node, m) {
  const text = m.raw.toString('latin1');
  const split = text.search(/\r?\n\r?\n/);
  const header = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split);
  const field = (name) => {
    const re = new RegExp(`^${name}:(.*(?:\\r?\\n[ \\t].*)*)`, 'im');
    const r = re.exec(header);
    return r ? r[1] : '';
  };
  switch (node.type) {
    case 'all':
      return true;
    case 'and':
      return node.children.every((c) => matches(c, m));
    case 'or':
      return node.children.some((c) => matches(c, m));
    case 'not':
      return !matches(node.child, m);
    case 'flag':
      return m.flags.includes(node.flag);
    case 'size':
      return node.op === 'larger' ? m.raw.length > node.value : m.raw.length < node.value;
    case 'substring': {
      const hay = {
        text,
        body,
        from: field('from'),
        to: field('to'),
        cc: field('cc'),
        subject: field('subject'),
      }[node.field];
      return hay.toLowerCase().includes(node.value.toLowerCase());
    }
    default:
      return false;
  }
}

module.exports = { MemoryService };
