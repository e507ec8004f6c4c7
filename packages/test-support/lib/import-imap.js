'use strict';

/**
 * `mailgate import imap` arguments for a loopback Dovecot instance of @mailgate/dovecot:
 * plain text, password from the MG_IMAP_PW environment variable, JSON report, no progress.
 * @param {{host: string, port: number, user: string}} inst
 * @param {string} user the mailgate user to import into
 * @returns {string[]}
 */
function importImapArgs(inst, user) {
  return [
    'import',
    'imap',
    '--host',
    inst.host,
    '--port',
    String(inst.port),
    '--login',
    inst.user,
    '--password-env',
    'MG_IMAP_PW',
    '--no-tls',
    '--user',
    user,
    '--json',
    '--quiet',
  ];
}

module.exports = { importImapArgs };
