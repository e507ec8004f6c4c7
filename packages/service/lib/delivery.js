'use strict';

/*
 * Local delivery (issue 32): what the LMTP server and `mailgate deliver` call to turn a
 * recipient address into a user and a mailbox, and to store one delivered message. It owns the
 * address rule and the delivery headers; it never writes a message itself: the bytes go through
 * the pg backend's `append`, the one store write path shared with IMAP APPEND and the HTTP
 * append (same derived rows, word index, thread keys, ES outbox row). It never answers a
 * protocol: callers map its outcomes to LMTP replies or sysexits codes (`outcomeOf`).
 *
 * Address rule: an entry of the address table (MAILGATE_ADDRESS_MAP, a JSON file
 * {"address": "user"} with lower-case keys) first; otherwise the local part is the user name
 * (as written, then lower-cased). `user+detail@…` (recipient delimiter `+`) is the user `user`
 * with the detail `detail`: the message goes into the mailbox named `detail` when it exists,
 * INBOX otherwise (Dovecot's lmtp_save_to_detail_mailbox).
 *
 * Users routed to `proxy` (not cut over yet, issue 33.4): their mail still belongs to their old
 * server. When their legacy entry names its delivery server (`relay: "lmtp://host:port"`,
 * `mailgate legacy add-user --relay`, the accounts file's `relay`), the message is relayed
 * there (relay.js) and the upstream's reply is the answer; otherwise, and while a migration
 * holds the user's deliveries for its last pass (route-ops.js's delivery gate), the answer is
 * MAILBOX_MIGRATING (451 4.2.1 / exit 75: the MTA retries, and after the cutover the mail is
 * stored here). A relay runs under the user's shared delivery gate, so the migration's hold
 * waits for relays in flight: a message is either upstream before the last import pass or
 * stored here after the route switch, never both, never neither.
 */

const fs = require('node:fs');
const os = require('node:os');
const { errors, isCoded } = require('@mailgate/core');
const legacy = require('@mailgate/legacy');
const { relayMessage, parseRelayTarget, relayTargetText } = require('./relay');

const DELIMITER = '+';

/**
 * How a delivery attempt ended, for the edges: `stored`, `nouser` (permanent: unknown user),
 * `migrating` (the user's route is `proxy`: temporary until the cutover), `toobig`
 * (permanent), `dataerr` (permanent: bad address or bytes), `tempfail` (anything transient:
 * database down, lock timeout, an unexpected fault; the sender keeps the mail and retries),
 * `relayfail` (a proxied user's upstream delivery server gave no answer: transient), `busy`
 * (every relay slot of this process is taken: transient).
 * @param {unknown} err an error thrown by resolve or deliver
 * @returns {'nouser'|'migrating'|'toobig'|'dataerr'|'tempfail'|'relayfail'|'busy'}
 */
function outcomeOf(err) {
  if (!isCoded(err)) return 'tempfail';
  switch (err.code) {
    case 'USER_NOT_FOUND':
      return 'nouser';
    case 'MAILBOX_MIGRATING':
      return 'migrating';
    case 'PAYLOAD_TOO_LARGE':
      return 'toobig';
    case 'INVALID_INPUT':
      return 'dataerr';
    case 'UPSTREAM_DELIVERY_FAILED':
      return 'relayfail';
    case 'RELAY_BUSY':
      return 'busy';
    default:
      return 'tempfail';
  }
}

/**
 * The address table of MAILGATE_ADDRESS_MAP, read once per process.
 * @param {NodeJS.ProcessEnv} env
 * @returns {Map<string, string>}
 */
function loadAddressMap(env) {
  const file = env.MAILGATE_ADDRESS_MAP;
  if (!file) return new Map();
  let obj;
  try {
    obj = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new errors.CONFIG_INVALID(`MAILGATE_ADDRESS_MAP ${file}: ${err.code || err.message}`);
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new errors.CONFIG_INVALID('MAILGATE_ADDRESS_MAP must hold a JSON object');
  }
  return new Map(Object.entries(obj).map(([k, v]) => [k.toLowerCase(), String(v)]));
}

/**
 * Splits an envelope address into local part and domain (the last `@`; a quoted local part
 * keeps its quotes off).
 * @param {string} address
 */
function splitAddress(address) {
  const at = address.lastIndexOf('@');
  let local = at < 0 ? address : address.slice(0, at);
  if (local.length > 1 && local.startsWith('"') && local.endsWith('"')) {
    local = local.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return { local, domain: at < 0 ? '' : address.slice(at + 1) };
}

/**
 * The delivery headers Dovecot's LMTP and LDA prepend: `Return-Path: <sender>` and
 * `Delivered-To: <recipient>`, in the message's own line ending (CRLF when its first line ends
 * so, LF otherwise), so that the stored bytes are exactly these lines followed by the message
 * as received.
 * @param {Buffer} raw
 * @param {{sender: string, recipient: string}} env
 * @returns {Buffer}
 */
function withDeliveryHeaders(raw, env) {
  const lf = raw.indexOf(0x0a);
  const eol = lf > 0 && raw[lf - 1] === 0x0d ? '\r\n' : lf < 0 ? '\r\n' : '\n';
  const clean = (s) => String(s).replace(/[\r\n\0]/g, '');
  const head = `Return-Path: <${clean(env.sender)}>${eol}Delivered-To: ${clean(env.recipient)}${eol}`;
  return Buffer.concat([Buffer.from(head, 'utf8'), raw]);
}

/**
 * The delivery operations of a mail service.
 * @param {import('./index').MailService} service
 * @returns {{outcomeOf: typeof outcomeOf, resolve: Function, deliver: Function}}
 */
function createDelivery(service) {
  let table = null;
  // Relays holding a delivery gate (one pooled connection each) at once in this process.
  let relaying = 0;
  let relayLimit = null;
  const addressTable = () => (table ??= loadAddressMap(service.env || {}));
  const hostname = os.hostname();

  /** Where a proxied user's mail goes upstream (their legacy entry's `relay`), or null. */
  function relayTargetOf(name) {
    const home = service.config && service.config.home;
    const relay = home ? legacy.relayTarget(home, name) : null;
    return relay ? parseRelayTarget(relay) : null;
  }

  /**
   * The user row of a name, or null when there is none (other faults are thrown): read fresh
   * at every RCPT (store findUser: one named statement, no cache to go stale).
   */
  async function findUser(name) {
    if (!name) return null;
    return service.store.findUser(name);
  }

  return {
    outcomeOf,

    /**
     * The recipient's user and detail. USER_NOT_FOUND for an address no user has. A user
     * routed to `proxy` is relayed (`relay`: their upstream delivery server) when their
     * legacy entry names one and no migration holds their deliveries; otherwise
     * MAILBOX_MIGRATING (the caller answers a temporary failure, so the MTA keeps the message
     * and delivers it here after the cutover). Anything else is transient.
     * @param {string} address envelope recipient (`user@domain`, `user+detail@domain`)
     * @returns {Promise<{address: string, user: {id: number, name: string}, detail: string|null,
     *   relay?: {protocol: string, host: string, port: number}}>}
     */
    async resolve(address) {
      const addr = String(address || '').trim();
      if (!addr || addr.length > 320) throw new errors.USER_NOT_FOUND(addr.slice(0, 64));
      const mapped = addressTable().get(addr.toLowerCase());
      const { local } = splitAddress(addr);
      const plus = local.indexOf(DELIMITER);
      const base = plus > 0 ? local.slice(0, plus) : local;
      const detail = plus > 0 ? local.slice(plus + 1) || null : null;
      let u = null;
      let whole = false;
      if (mapped) u = await findUser(mapped);
      else {
        // A user whose name holds the delimiter is found by the whole local part first.
        const names = [local, local.toLowerCase()];
        if (plus > 0) names.push(base, base.toLowerCase());
        for (const name of new Set(names)) {
          u = await findUser(name);
          whole = name.length === local.length;
          if (u) break;
        }
      }
      if (!u) throw new errors.USER_NOT_FOUND(addr);
      if (u.route === 'proxy') {
        const relay = u.delivery_hold ? null : relayTargetOf(u.name);
        if (!relay) throw new errors.MAILBOX_MIGRATING(u.name);
        return { address: addr, user: { id: u.id, name: u.name }, detail: null, relay };
      }
      return {
        address: addr,
        user: { id: u.id, name: u.name },
        detail: mapped || whole ? null : detail,
      };
    },

    /**
     * Stores one message for a resolved recipient, with the delivery headers, through the
     * backend's `append` (the one write path). Resolves only after PostgreSQL committed it.
     * The mailbox: `opts.mailbox` when given and existing, else the detail's when it exists,
     * else INBOX (created when the user has none yet). A relayed recipient (resolve's `relay`)
     * gets the message as received handed to their upstream server instead, under their
     * delivery gate, and the result carries the upstream's reply (`relayed`); when the route
     * became `store` since resolve, it is stored here; when a migration holds the user's
     * deliveries now, MAILBOX_MIGRATING.
     * @param {{address: string, user: {id: number, name: string}, detail: string|null}} rcpt
     * @param {Buffer} raw the message as received
     * @param {{sender?: string, mailbox?: string, headers?: boolean}} [opts] headers false:
     *   store the bytes without Return-Path/Delivered-To
     * @returns {Promise<{mailbox: string, uid: number, uidvalidity: number}|
     *   {relayed: {code: number, enhanced: string|null, text: string}, upstream: string}>}
     */
    async deliver(rcpt, raw, opts = {}) {
      if (rcpt.relay) {
        // The relay slot is taken before connecting: no queue, a slot is free now or the MTA
        // retries later (it keeps the message), and a refused relay never reaches the old
        // server (it opened and closed a connection there once). An old server that stalls
        // takes at most `relayLimit` connections of the pool.
        relayLimit ??= relayConcurrency(service);
        if (relaying >= relayLimit) throw new errors.RELAY_BUSY(relayLimit);
        relaying++;
        let relayed;
        try {
          // Connected and greeted first; only the transaction runs under the gate, so a slow
          // or silent upstream does not hold a pooled connection while it is being reached.
          relayed = await relayMessage(
            rcpt.relay,
            { sender: opts.sender || '', recipient: rcpt.address, raw, name: hostname },
            (send) =>
              service.store.withDeliveryGate(rcpt.user.id, async (u) => {
                if (u.route !== 'proxy') return null; // cut over since RCPT: stored here below
                if (u.hold) throw new errors.MAILBOX_MIGRATING(rcpt.user.name);
                return send();
              }),
          );
        } finally {
          relaying--;
        }
        if (relayed) return { relayed, upstream: relayTargetText(rcpt.relay) };
      }
      const be = await service.openBackend('pg', rcpt.user);
      try {
        const bytes =
          opts.headers === false
            ? raw
            : withDeliveryHeaders(raw, { sender: opts.sender || '', recipient: rcpt.address });
        const mailbox = await pickMailbox(be, opts.mailbox || rcpt.detail);
        try {
          const r = await be.append(mailbox, bytes, {});
          return { mailbox, uid: r.uid, uidvalidity: r.uidvalidity };
        } catch (err) {
          if (!err || err.code !== 'MAILBOX_NOT_FOUND' || mailbox !== 'INBOX') throw err;
          // The user's first mail: INBOX is made on demand, as an IMAP login makes it.
          await be.createMailbox('INBOX').catch((e) => {
            if (!e || e.code !== 'MAILBOX_EXISTS') throw e;
          });
          const r = await be.append('INBOX', bytes, {});
          return { mailbox: 'INBOX', uid: r.uid, uidvalidity: r.uidvalidity };
        }
      } finally {
        await be.close();
      }
    },
  };
}

/**
 * How many relays may hold a delivery gate at once in this process: MAILGATE_RELAY_CONCURRENCY,
 * by default a quarter of the store's pool (at least 1), so IMAP, the API and local deliveries
 * keep the rest whatever the old servers do.
 * @param {import('./index').MailService} service
 * @returns {number} CONFIG_INVALID for a value that is not a positive integer
 */
function relayConcurrency(service) {
  const text = (service.env || {}).MAILGATE_RELAY_CONCURRENCY;
  if (text !== undefined && text !== '') {
    if (!/^[1-9]\d{0,3}$/.test(String(text).trim())) {
      throw new errors.CONFIG_INVALID('MAILGATE_RELAY_CONCURRENCY must be a positive integer');
    }
    return Number(String(text).trim());
  }
  // The live pool's size, asked of the store (which owns the connection); db.js's default 8
  // when the store has no pool yet.
  const size = service.store && service.store.poolStats ? service.store.poolStats().size : 0;
  return Math.max(1, Math.floor((size || 8) / 4));
}

/**
 * The mailbox a delivery goes to: `wanted` when it exists (one indexed read of the mailbox
 * row), INBOX otherwise. A name the mailbox rule refuses is not a fault of the message.
 */
async function pickMailbox(be, wanted) {
  if (!wanted) return 'INBOX';
  try {
    return (await be.status(wanted, { counts: false })).name;
  } catch (err) {
    if (err && ['MAILBOX_NOT_FOUND', 'INVALID_INPUT', 'USAGE'].includes(err.code)) return 'INBOX';
    throw err;
  }
}

module.exports = { createDelivery, outcomeOf, withDeliveryHeaders, splitAddress, DELIMITER };
