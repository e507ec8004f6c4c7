'use strict';

const os = require('node:os');
const { execFileSync } = require('node:child_process');

const quiet = (cmd, args) => {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
};

/**
 * Facts about the machine and the software measured, for results.json.
 * @param {{work: string, config?: object}} o
 * @returns {object}
 */
function machineFacts(o) {
  const cpus = os.cpus();
  let postgres = null;
  if (o.config && o.config.databaseUrl) postgres = 'external (DATABASE_URL)';
  else {
    try {
      const { EmbeddedPostgres } = require('@mailgate/service');
      const bin = new EmbeddedPostgres(o.work).binDir();
      postgres = quiet(require('node:path').join(bin, 'postgres'), ['--version']);
    } catch {
      postgres = null;
    }
  }
  const df = quiet('df', ['-hT', o.work]);
  const disk = df ? df.split('\n').pop().split(/\s+/).slice(0, 3).join(' ') : null;
  return {
    cpu: cpus[0] && cpus[0].model,
    cores: os.availableParallelism(),
    ramGB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    disk,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres,
    dovecot: quiet('dovecot', ['--version']),
    elasticsearch: null,
  };
}

module.exports = { machineFacts };
