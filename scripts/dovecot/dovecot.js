#!/usr/bin/env node
'use strict';

/*
 * Command line of the project's Dovecot launcher (@mailgate/dovecot): a real Dovecot on loopback
 * for one user, everything in a scratch dir. See README.md in this folder.
 *
 *   node scripts/dovecot/dovecot.js start --format mbox|maildir [--mail PATH] [--port N]
 *        [--dir D] [--user U] [--password P] [--link] [--json]
 *   node scripts/dovecot/dovecot.js stop --dir D [--keep]
 *   node scripts/dovecot/dovecot.js status --dir D
 *   node scripts/dovecot/dovecot.js deliver --dir D [--from ADDR] [--mailbox NAME] < message.eml
 */

const fs = require('node:fs');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

const { start, stop, status, deliver, DovecotError } = dovecot;

class UsageError extends Error {}

const USAGE = `usage:
  node scripts/dovecot/dovecot.js start --format mbox|maildir [--mail PATH] [--port N] [--dir D]
       [--user U] [--password P] [--link] [--json]
  node scripts/dovecot/dovecot.js stop --dir D [--keep]
  node scripts/dovecot/dovecot.js status --dir D [--json]
  node scripts/dovecot/dovecot.js deliver --dir D [--from ADDR] [--mailbox NAME] < message.eml`;

function parseArgs(argv) {
  const flags = new Set(['json', 'keep', 'link', 'help']);
  const o = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h') o.help = true;
    else if (a.startsWith('--')) {
      const [k, v] = a.slice(2).split(/=(.*)/s);
      if (flags.has(k)) o[k] = true;
      else if (v !== undefined) o[k] = v;
      else if (i + 1 < argv.length) o[k] = argv[++i];
      else throw new UsageError(`--${k} needs a value`);
    } else o._.push(a);
  }
  return o;
}

async function main(argv) {
  const o = parseArgs(argv);
  const cmd = o._[0];
  if (o.help || !cmd) {
    console.log(USAGE);
    return o.help ? 0 : 2;
  }
  const known = {
    start: ['format', 'mail', 'port', 'dir', 'user', 'password', 'link', 'json'],
    stop: ['dir', 'keep'],
    status: ['dir', 'json'],
    deliver: ['dir', 'from', 'mailbox', 'user'],
  };
  if (!known[cmd]) throw new UsageError(`unknown command ${cmd}`);
  for (const k of Object.keys(o)) {
    if (k !== '_' && !known[cmd].includes(k)) throw new UsageError(`${cmd}: unknown option --${k}`);
  }
  if (cmd !== 'start' && !o.dir) throw new UsageError(`${cmd}: --dir is required`);

  if (cmd === 'start') {
    let port;
    if (o.port !== undefined) {
      port = Number(o.port);
      if (!Number.isInteger(port) || port < 1 || port > 65535) {
        throw new UsageError(`--port must be 1..65535, got ${o.port}`);
      }
    }
    const t0 = Date.now();
    const inst = await start({
      format: o.format,
      mail: o.mail,
      port,
      dir: o.dir,
      user: o.user,
      password: o.password,
      link: Boolean(o.link),
    });
    const info = {
      host: inst.host,
      port: inst.port,
      user: inst.user,
      password: inst.password,
      dir: inst.dir,
      conf: inst.conf,
      pid: inst.pid,
      format: inst.format,
    };
    if (o.json) console.log(JSON.stringify(info));
    else {
      for (const [k, v] of Object.entries(info)) console.log(`${k}=${v}`);
      console.error(`dovecot: started in ${Date.now() - t0} ms; stop with: ${cmdStop(inst.dir)}`);
    }
  } else if (cmd === 'stop') {
    await stop(o.dir, { keep: Boolean(o.keep) });
    console.error(`dovecot: stopped (${o.dir})`);
  } else if (cmd === 'status') {
    const s = status(o.dir);
    if (o.json) console.log(JSON.stringify(s));
    else console.log(s.running ? `running pid ${s.pids[0]} port ${s.port}` : 'stopped');
    return s.running ? 0 : 3;
  } else if (cmd === 'deliver') {
    const raw = fs.readFileSync(0);
    await deliver(o.dir, raw, { from: o.from, mailbox: o.mailbox, user: o.user });
  }
  return 0;
}

function cmdStop(dir) {
  const rel = path.relative(process.cwd(), __filename);
  return `node ${rel.startsWith('..') ? __filename : rel} stop --dir ${dir}`;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      if (err instanceof UsageError) console.error(`dovecot: ${err.message}\n${USAGE}`);
      else if (err instanceof DovecotError) console.error(`dovecot: ${err.message}`);
      else console.error(err);
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}

module.exports = { ...dovecot, main };
