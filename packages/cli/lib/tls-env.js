'use strict';

/*
 * The one reading of a server's STARTTLS certificate from the environment, shared by the IMAP
 * and LMTP listeners (`<PREFIX>_TLS_CERT` / `<PREFIX>_TLS_KEY`, PEM files), so that both answer
 * a half-set pair or an unreadable file with the same CONFIG_INVALID before anything listens.
 * It only reads the two files; it never decides whether a listener uses them.
 */

const fs = require('node:fs');
const { errors } = require('@mailgate/core');

/**
 * The certificate and key named by `<prefix>_TLS_CERT` and `<prefix>_TLS_KEY`.
 * @param {NodeJS.ProcessEnv} env
 * @param {string} prefix the protocol's variable prefix: 'IMAP' or 'LMTP'
 * @returns {{cert: Buffer, key: Buffer}|null} null when neither variable is set
 * @throws CONFIG_INVALID when only one is set or a file cannot be read
 */
function tlsFromEnv(env, prefix) {
  const certVar = `${prefix}_TLS_CERT`;
  const keyVar = `${prefix}_TLS_KEY`;
  if (!env[certVar] && !env[keyVar]) return null;
  if (!env[certVar] || !env[keyVar]) {
    throw new errors.CONFIG_INVALID(`${certVar} and ${keyVar} must be set together`);
  }
  try {
    return { cert: fs.readFileSync(env[certVar]), key: fs.readFileSync(env[keyVar]) };
  } catch (err) {
    throw new errors.CONFIG_INVALID(
      `cannot read the ${prefix} TLS files: ${err.code || err.message}`,
    );
  }
}

module.exports = { tlsFromEnv };
