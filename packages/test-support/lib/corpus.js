'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const SHARED = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'corpus');

/**
 * Unpacks the shared real-mail corpus once (outside the repo) and returns its directory,
 * or null when ../shared/corpus is not beside the checkout. In CI it must be there.
 * @returns {string|null}
 */
function corpusDir() {
  const dir = process.env.MAILGATE_CORPUS_DIR || path.join(os.tmpdir(), 'mailgate-corpus');
  if (fs.existsSync(path.join(dir, '.complete'))) return dir;
  if (!fs.existsSync(path.join(SHARED, 'unpack.sh'))) {
    if (process.env.CI) throw new Error(`shared corpus not found at ${SHARED}`);
    return null;
  }
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('bash', [path.join(SHARED, 'unpack.sh'), dir], { stdio: 'ignore' });
  fs.writeFileSync(path.join(dir, '.complete'), '');
  return dir;
}

module.exports = { corpusDir, SHARED };
