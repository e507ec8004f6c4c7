'use strict';

/*
 * Relaying a proxied user's mail to their old server (issue 33.4, issue 32.3): until the
 * user's cutover their mail still belongs upstream, so a delivery for them is handed to the
 * upstream LMTP or SMTP server named in their legacy entry (`relay: "lmtp://host:port"`),
 * one transaction per recipient, and the upstream's own reply for that recipient is what the
 * caller answers: 250 only after the upstream said 250, its 4xx/5xx as it gave them, and a
 * transient failure when no reply came (unreachable, timed out, dropped). The client is
 * nodemailer's SMTPConnection (LMTP and SMTP, dot-stuffing, PIPELINING, opportunistic
 * STARTTLS). Owns no policy: which users are relayed and when is delivery.js's.
 * Never logs the message or the upstream's text beyond its code.
 */

const { errors } = require('@mailgate/core');

// Waits for the upstream: connecting and its greeting are short (an MTA's own LMTP client
// gives up on a connect after 30 s); the message itself may take a while on a loaded server,
// but it runs under the user's delivery gate (one pooled connection), so not for ever. Not
// shorter: giving up on an old server that stored the message but answers late makes the
// MTA's retry a duplicate there; delivery.js bounds how many relays hold a connection instead.
const CONNECT_MS = 30 * 1000;
const SOCKET_MS = 2 * 60 * 1000;

/**
 * Parses a relay target: `lmtp://host:port` or `smtp://host:port` (port defaults: 24, 25).
 * @param {string} text
 * @returns {{protocol: 'lmtp'|'smtp', host: string, port: number}} RELAY_INVALID
 */
function parseRelayTarget(text) {
  const m = /^(lmtp|smtp):\/\/(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/.exec(
    String(text || '').trim(),
  );
  const port = m && m[3] ? Number(m[3]) : m && m[1] === 'lmtp' ? 24 : 25;
  if (!m || port < 1 || port > 65535) throw new errors.RELAY_INVALID(JSON.stringify(text));
  return { protocol: m[1], host: m[2].replace(/^\[|\]$/g, ''), port };
}

/** `lmtp://host:port`: how a target is written in legacy.json, logs and messages. */
function relayTargetText(t) {
  const host = t.host.includes(':') ? `[${t.host}]` : t.host;
  return `${t.protocol}://${host}:${t.port}`;
}

/**
 * An SMTP/LMTP reply line (`250 2.0.0 <a> Saved`) as its parts; the last line of a
 * multi-line reply counts.
 * @param {string} text
 * @returns {{code: number, enhanced: string|null, text: string}|null}
 */
function parseReply(text) {
  const lines = String(text || '')
    .split(/\r?\n/)
    .filter(Boolean);
  const m = /^([2-5]\d\d)[ -](?:([245]\.\d{1,3}\.\d{1,3}) )?(.*)$/.exec(lines[lines.length - 1]);
  if (!m) return null;
  return { code: Number(m[1]), enhanced: m[2] || null, text: m[3].slice(0, 200) };
}

/**
 * Hands one message for one recipient to the upstream server and returns its reply for that
 * recipient (after DATA for LMTP; the message's reply for SMTP; the refusal of MAIL or RCPT).
 * The connection and greeting come first; `around` wraps only the transaction (the delivery
 * gate: a lock that must not wait on a slow connect).
 * @param {{protocol: 'lmtp'|'smtp', host: string, port: number}} target
 * @param {{sender: string, recipient: string, raw: Buffer, name?: string,
 *   connectMs?: number, socketMs?: number}} m
 * @param {<T>(send: () => Promise<T>) => Promise<T|null>} [around] runs `send` (or not: its
 *   null, or its error, is the result)
 * @returns {Promise<{code: number, enhanced: string|null, text: string}|null>}
 *   UPSTREAM_DELIVERY_FAILED when no reply for the recipient came
 */
async function relayMessage(target, m, around = (send) => send()) {
  const where = relayTargetText(target);
  // Loaded when a relay happens: only deliveries to proxied users with a relay need it.
  const SMTPConnection = require('nodemailer/lib/smtp-connection');
  const conn = new SMTPConnection({
    host: target.host,
    port: target.port,
    lmtp: target.protocol === 'lmtp',
    secure: false,
    name: m.name,
    connectionTimeout: m.connectMs ?? CONNECT_MS,
    greetingTimeout: m.connectMs ?? CONNECT_MS,
    socketTimeout: m.socketMs ?? SOCKET_MS,
    logger: false,
  });
  const unreachable = (err) =>
    new errors.UPSTREAM_DELIVERY_FAILED(where, (err && err.code) || 'connection failed');
  try {
    await new Promise((resolve, reject) => {
      conn.once('error', reject);
      conn.connect(() => {
        conn.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    conn.close();
    throw unreachable(err);
  }
  // Errors after connecting come through send's callback; a late socket error is dropped.
  conn.on('error', () => {});
  const send = async () => {
    try {
      const info = await new Promise((resolve, reject) => {
        conn.send({ from: m.sender || '', to: [m.recipient] }, m.raw, (err, r) =>
          err ? reject(err) : resolve(r),
        );
      });
      const refused = (info.rejectedErrors || [])[0];
      const r = parseReply(refused ? refused.response : info.response);
      if (!r) throw unreachable({ code: 'EPROTOCOL' });
      return r;
    } catch (err) {
      // The upstream's own refusal of the sender, the recipient or the message is its answer.
      const own = err && ['MAIL FROM', 'RCPT TO', 'DATA'].includes(err.command);
      const r = own ? parseReply(err.response) : null;
      if (r && r.code >= 400) return r;
      if (err && err.code === 'UPSTREAM_DELIVERY_FAILED') throw err;
      throw unreachable(err);
    }
  };
  try {
    return await around(send);
  } finally {
    // QUIT when the session is still up; the socket is closed either way.
    try {
      conn.quit();
    } catch {
      // already gone
    }
    conn.close();
  }
}

module.exports = { relayMessage, parseRelayTarget, relayTargetText, parseReply };
