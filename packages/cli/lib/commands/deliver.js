'use strict';

const { errors, isCoded } = require('@mailgate/core');
const { deliveryOutcome } = require('@mailgate/service');

/*
 * `mailgate deliver -a ADDRESS [-m MAILBOX] [-f SENDER]`: a local delivery agent (Postfix
 * mailbox_command, Exim pipe transport, procmail, fetchmail --mda) like dovecot-lda. The
 * message comes on stdin; it is stored through the service's delivery operations (the one
 * store write path) with Return-Path and Delivered-To prepended. Exit codes from sysexits.h,
 * so that the MTA bounces only what can never succeed: 0 stored (only after the commit),
 * 67 EX_NOUSER, 65 EX_DATAERR (over the size limit, unreadable input), 75 EX_TEMPFAIL for
 * anything transient (database down, lock timeout, a proxied user before the cutover whose
 * mail is not relayed, an old server that does not answer, any unexpected fault). A proxied
 * user's mail relayed to their old server exits by its reply (relayRefusal). Bad options are
 * usage errors (exit 2) like every command.
 */

const EX = Object.freeze({ OK: 0, DATAERR: 65, NOUSER: 67, UNAVAILABLE: 69, TEMPFAIL: 75 });
const EXIT_OF = {
  nouser: EX.NOUSER,
  toobig: EX.DATAERR,
  dataerr: EX.DATAERR,
  migrating: EX.TEMPFAIL,
  tempfail: EX.TEMPFAIL,
  relayfail: EX.TEMPFAIL,
  busy: EX.TEMPFAIL,
};

/**
 * A proxied user's message relayed to their old server: exit 0 only on its 2xx; its refusal
 * as a coded error (a 4xx is transient, exit 75; a 5xx permanent: 67 for an unknown mailbox
 * 5.1.x, 69 EX_UNAVAILABLE otherwise).
 * @param {{relayed: {code: number, enhanced: string|null, text: string}, upstream: string}} r
 */
function relayRefusal(r) {
  const { code, enhanced } = r.relayed;
  if (code < 300) return null;
  const said = `${code}${enhanced ? ` ${enhanced}` : ''}`;
  if (code < 500)
    return { exit: EX.TEMPFAIL, err: new errors.DELIVERY_DEFERRED(`upstream ${said}`) };
  return {
    exit: /^5\.1\./.test(enhanced || '') ? EX.NOUSER : EX.UNAVAILABLE,
    err: new errors.UPSTREAM_DELIVERY_REFUSED(r.upstream, said),
  };
}
const DEFAULT_MAX = 50 * 1024 * 1024;

/**
 * Reads stdin up to max bytes; PAYLOAD_TOO_LARGE above it (read no further).
 * @param {NodeJS.ReadableStream} input
 * @param {number} max
 * @returns {Promise<Buffer>}
 */
async function readMessage(input, max) {
  const chunks = [];
  let n = 0;
  for await (const c of input) {
    n += c.length;
    if (n > max) throw new errors.PAYLOAD_TOO_LARGE(`message larger than ${max} bytes`);
    chunks.push(c);
  }
  return Buffer.concat(chunks, n);
}

/**
 * An mbox `From ` line in front (procmail, `formail`, Postfix with flags=F) is not part of the
 * message, as dovecot-lda takes it: dropped, and its address is the sender when -f is not given.
 * @param {Buffer} raw
 * @returns {{raw: Buffer, sender: string|null}}
 */
function dropFromLine(raw) {
  if (raw.subarray(0, 5).toString('latin1') !== 'From ') return { raw, sender: null };
  const nl = raw.indexOf(0x0a);
  const line = raw.toString('latin1', 5, nl < 0 ? raw.length : nl);
  const sender = line.split(' ')[0] || '';
  return {
    raw: nl < 0 ? Buffer.alloc(0) : raw.subarray(nl + 1),
    sender: sender === 'MAILER-DAEMON' ? '' : sender,
  };
}

/**
 * Registers `deliver`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('deliver')
    .description(
      'store the message on stdin for ADDRESS (an LDA for Postfix mailbox_command, Exim, procmail); exit 0 stored, 67 unknown user, 65 bad data, 75 temporary failure',
    )
    .requiredOption(
      '-a, --address <address>',
      'recipient address (the address rule: README "Receiving mail")',
    )
    .option('-m, --mailbox <mailbox>', 'mailbox to store into when it exists (INBOX otherwise)')
    .option('-f, --from <sender>', 'envelope sender for Return-Path')
    .option('--json', 'print {"user","mailbox","uid","uidvalidity"} on stdout')
    .action(async (o) => {
      const max = Number(process.env.LMTP_MAX_MESSAGE_BYTES) || DEFAULT_MAX;
      try {
        const input = dropFromLine(await readMessage(process.stdin, max));
        if (!input.raw.length) throw new errors.INVALID_INPUT('empty message on stdin');
        const r = await ctx.withService(async (service) => {
          const rcpt = await service.delivery.resolve(o.address);
          const stored = await service.delivery.deliver(rcpt, input.raw, {
            sender: o.from ?? input.sender ?? '',
            mailbox: o.mailbox,
          });
          return { user: rcpt.user.name, ...stored };
        });
        const refused = r.relayed ? relayRefusal(r) : null;
        if (refused) {
          const e = refused.err;
          if (o.json)
            process.stdout.write(
              JSON.stringify({ error: { code: e.code, message: e.message } }) + '\n',
            );
          return ctx.setExit(refused.exit, { code: e.code, message: e.message });
        }
        ctx.out(Boolean(o.json), r, () => {});
      } catch (err) {
        const outcome = deliveryOutcome(err);
        // A fault outside the catalogue is named by its system code only (never its text).
        const shown = isCoded(err)
          ? err
          : new errors.DELIVERY_DEFERRED(
              (err && typeof err.code === 'string' && err.code) || 'unexpected error',
            );
        ctx.log.warn({ code: err && err.code, err: err && err.message }, 'deliver failed');
        if (o.json)
          process.stdout.write(
            JSON.stringify({ error: { code: shown.code, message: shown.message } }) + '\n',
          );
        ctx.setExit(EXIT_OF[outcome], { code: shown.code, message: shown.message });
      }
    });
}

module.exports = { register, dropFromLine, EX };
