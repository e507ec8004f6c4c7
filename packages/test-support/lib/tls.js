'use strict';

/*
 * A throw-away self-signed certificate for the STARTTLS tests of the protocol servers (IMAP,
 * LMTP): made by openssl in a fresh temporary folder the caller removes. Test support only.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

/**
 * A one-day certificate for CN=localhost and its key.
 * @param {string} name scratch folder prefix (`mg-<name>-tls-`)
 * @returns {{dir: string, creds: {key: Buffer, cert: Buffer}|null}} creds null when openssl
 *   could not make them (not installed); dir exists either way
 */
function selfSignedCert(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mg-${name}-tls-`));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ].concat(['-keyout', keyFile, '-out', certFile]),
      { stdio: 'ignore' },
    );
    return { dir, creds: { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) } };
  } catch {
    return { dir, creds: null };
  }
}

module.exports = { selfSignedCert };
