'use strict';

/*
 * A private Debian Postfix instance for the tests: its own configuration, queue and data
 * directories under a scratch folder (`postfix -c DIR`), SMTP on a loopback port, and every
 * recipient of the virtual domain `example.test` delivered by LMTP to the given port
 * (`virtual_transport = lmtp:inet:127.0.0.1:PORT`). Retries are quick (1-2 s) so a test can
 * wait for the queue to empty. Needs root (Postfix drops to its `postfix` user).
 */

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
// The one loopback-port picker of the repository (Dovecot's helper; the tests run beside Dovecot).
const { freePort } = require('@mailgate/dovecot');

const POSTFIX = '/usr/sbin/postfix';
const SMTP_SOURCE = '/usr/sbin/smtp-source';

/** Why this machine cannot run the Postfix tests (null when it can). */
function postfixMissing() {
  if (!fs.existsSync(POSTFIX) || !fs.existsSync(SMTP_SOURCE)) {
    return 'postfix is not installed (apt-get install postfix)';
  }
  if (process.getuid && process.getuid() !== 0) return 'a Postfix instance needs root';
  return null;
}

// The services a delivering instance needs; nothing chrooted (the queue is a scratch folder).
const MASTER = (smtpPort) => `127.0.0.1:${smtpPort} inet n - n - - smtpd
pickup    unix  n - n 60 1 pickup
cleanup   unix  n - n -  0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n -  - trivial-rewrite
bounce    unix  - - n -  0 bounce
defer     unix  - - n -  0 bounce
trace     unix  - - n -  0 bounce
verify    unix  - - n -  1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n -  - proxymap
smtp      unix  - - n -  - smtp
showq     unix  n - n -  - showq
error     unix  - - n -  - error
retry     unix  - - n -  - error
discard   unix  - - n -  - discard
local     unix  - n n -  - local
virtual   unix  - n n -  - virtual
lmtp      unix  - - n -  - lmtp
anvil     unix  - - n -  1 anvil
scache    unix  - - n -  1 scache
postlog   unix-dgram n - n - 1 postlogd
`;

/**
 * Starts an instance.
 * @param {{lmtpPort: number, users: string[]}} o users: local parts Postfix accepts for
 *   example.test (others are refused at RCPT, as a real virtual_mailbox_maps would)
 */
async function startPostfix(o) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-postfix-'));
  fs.chmodSync(dir, 0o755); // the postfix user walks into it
  for (const d of ['etc', 'queue', 'data']) fs.mkdirSync(path.join(dir, d));
  execFileSync('chown', ['postfix', path.join(dir, 'data')]);
  const smtpPort = await freePort();
  const users = o.users.map((u) => `${u}@example.test=ok`).join(', ');
  fs.writeFileSync(path.join(dir, 'etc', 'master.cf'), MASTER(smtpPort));
  fs.writeFileSync(
    path.join(dir, 'etc', 'main.cf'),
    `compatibility_level = 3.6
queue_directory = ${dir}/queue
data_directory = ${dir}/data
myhostname = mg-postfix.test
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
alias_maps =
alias_database =
smtpd_relay_restrictions = permit_mynetworks reject
virtual_mailbox_domains = example.test
virtual_mailbox_maps = inline:{ ${users} }
virtual_transport = lmtp:inet:127.0.0.1:${o.lmtpPort}
maillog_file_prefixes = ${dir}
maillog_file = ${dir}/maillog
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
`,
  );
  const cfg = path.join(dir, 'etc');
  const r = spawnSync(POSTFIX, ['-c', cfg, 'start'], { encoding: 'utf8' });
  if (r.status !== 0) {
    const log = fs.existsSync(path.join(dir, 'maillog'))
      ? fs.readFileSync(path.join(dir, 'maillog'), 'utf8')
      : '';
    throw new Error(`postfix start failed (${r.status}): ${r.stderr} ${log.slice(-2000)}`);
  }
  // Started when its SMTP port answers.
  for (let i = 0; ; i++) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(smtpPort, '127.0.0.1');
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) break;
    if (i > 100) throw new Error('postfix did not open its SMTP port');
    await new Promise((res) => setTimeout(res, 100));
  }
  return {
    dir,
    smtpPort,
    /** Messages still in the queue (incoming, active, deferred, hold). */
    queued() {
      let n = 0;
      for (const q of ['maildrop', 'incoming', 'active', 'deferred', 'hold']) {
        n += countFiles(path.join(dir, 'queue', q));
      }
      return n;
    },
    log() {
      const f = path.join(dir, 'maillog');
      return fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '';
    },
    /** Asks the queue manager to retry deferred mail now. */
    flush() {
      spawnSync('/usr/sbin/postqueue', ['-c', cfg, '-f'], { stdio: 'ignore' });
    },
    async stop() {
      spawnSync(POSTFIX, ['-c', cfg, 'stop'], { stdio: 'ignore' });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function countFiles(d) {
  if (!fs.existsSync(d)) return 0;
  let n = 0;
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    n += e.isDirectory() ? countFiles(path.join(d, e.name)) : 1;
  }
  return n;
}

/**
 * Runs smtp-source (Postfix's load generator) to completion.
 * @param {string[]} args e.g. ['-L', '-m', '10', '-t', 'a@example.test', '127.0.0.1:2424']
 * @returns {Promise<{code: number, stderr: string}>}
 */
function smtpSource(args) {
  const { spawn } = require('node:child_process');
  return new Promise((resolve) => {
    const p = spawn(SMTP_SOURCE, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => resolve({ code, stderr }));
  });
}

module.exports = { postfixMissing, startPostfix, smtpSource, freePort };
