'use strict';

/*
 * `npm run bench:deliver` (issue 32.6): mailgate's LMTP and IMAP APPEND beside Dovecot's
 * (Maildir and mbox) into a mailbox of --messages messages, in one run (lib/deliver-run.js).
 * Writes bench/results/deliver-<date>.json and .md.
 *
 *   npm run bench:deliver -- [--messages 20000] [--deliveries 2000] [--sessions 1,10]
 *        [--servers mailgate,dovecot-maildir,dovecot-mbox] [--size 4096] [--no-append] [--warmup 300]
 *        [--work DIR] [--out DIR] [--name NAME]
 *
 * Needs root (Dovecot's instances run as uid 5000) and Debian's postfix (smtp-source),
 * dovecot-imapd and dovecot-lmtpd.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runDeliverBench, deliverMarkdown, SERVERS } = require('../deliver-run');
const { ROOT, option, corpusDir } = require('../command-kit');

/**
 * `bench deliver`: see the file comment.
 * @param {string[]} args
 * @returns {Promise<{json: string, md: string, doc: object}>}
 */
async function main(args) {
  const corpus = option(args, '--corpus', null) || corpusDir();
  if (!corpus) throw new Error('the shared corpus is needed (../shared/corpus) or --corpus DIR');
  const servers = option(args, '--servers', SERVERS.join(',')).split(',');
  for (const s of servers) {
    if (!SERVERS.includes(s)) throw new Error(`unknown server ${s} (${SERVERS.join(', ')})`);
  }
  const o = {
    corpus,
    work: path.resolve(option(args, '--work', path.join(os.tmpdir(), 'mailgate-bench'))),
    messages: Number(option(args, '--messages', 20000)),
    deliveries: Number(option(args, '--deliveries', 2000)),
    sessions: option(args, '--sessions', '1,10').split(',').map(Number),
    size: Number(option(args, '--size', 4096)),
    // Untimed messages of the same kind before each timed phase, every server alike.
    warmup: Number(option(args, '--warmup', 300)),
    servers,
    append: !args.includes('--no-append'),
    log: (s) => process.stderr.write(`bench deliver: ${s}\n`),
  };
  const doc = await runDeliverBench(o);
  const out = path.resolve(option(args, '--out', path.join(ROOT, 'bench', 'results')));
  fs.mkdirSync(out, { recursive: true });
  const name = option(args, '--name', `deliver-${doc.started.slice(0, 10)}`);
  const json = path.join(out, `${name}.json`);
  const md = path.join(out, `${name}.md`);
  const command = `npm run bench:deliver -- ${args.join(' ')}`.trim();
  fs.writeFileSync(json, JSON.stringify({ command, ...doc }, null, 2) + '\n');
  fs.writeFileSync(md, deliverMarkdown(doc, command));
  process.stderr.write(`bench deliver: wrote ${json} and ${md}\n`);
  return { json, md, doc };
}

module.exports = {
  description:
    "receiving mail: mailgate's LMTP and IMAP APPEND beside Dovecot's (Maildir, mbox) into one INBOX",
  usage:
    '[--messages 20000] [--deliveries 2000] [--sessions 1,10] [--servers LIST] [--size 4096] ' +
    '[--no-append] [--warmup 300] [--corpus DIR] [--work DIR] [--out DIR] [--name NAME]',
  run: main,
};
