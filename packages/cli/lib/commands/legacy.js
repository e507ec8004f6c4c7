'use strict';

const { errors } = require('@mailgate/core');
const { addLegacyUser, parseRelayTarget, relayTargetText } = require('@mailgate/service');

/*
 * `mailgate legacy add-user`: where a user's legacy mail lives, for the comparison backends,
 * the IMAP proxy and the migration, and where their mail is relayed while they are on proxy.
 */

/**
 * Registers `legacy`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('legacy')
    .description('legacy backends (direct mbox/maildir, upstream IMAP) for search and the API')
    .command('add-user <user>')
    .description("record where a user's legacy mail lives ($MAILGATE_HOME/legacy.json)")
    .option('--mbox-dir <dir>', 'directory of mbox files (inbox.mbox or INBOX is INBOX)')
    .option('--maildir <dir>', 'Maildir / Maildir++ root')
    .option('--imap-host <host>')
    .option('--imap-port <port>', 'upstream IMAP port', (v) => Number(v))
    .option('--imap-login <login>')
    .option('--imap-password-env <var>', 'environment variable holding the upstream password')
    .option('--imap-tls', 'implicit TLS to the upstream server (IMAPS, default port 993)')
    .option(
      '--imap-plaintext',
      'no TLS at all (default: STARTTLS, required); only for a trusted network such as loopback',
    )
    .option(
      '--relay <url>',
      "the old server's delivery, lmtp://host:port or smtp://host:port: mail for the user is relayed there while they are routed to proxy",
    )
    .option('--json', 'print one JSON result object on stdout')
    .action((user, o) => {
      const entry = { mboxDir: o.mboxDir, maildir: o.maildir };
      // Checked here (RELAY_INVALID), kept as written in the canonical form.
      if (o.relay) entry.relay = relayTargetText(parseRelayTarget(o.relay));
      if (o.imapTls && o.imapPlaintext)
        throw new errors.USAGE(
          'legacy add-user: --imap-tls and --imap-plaintext exclude each other',
        );
      if (o.imapHost) {
        if (!o.imapLogin || !o.imapPasswordEnv)
          throw new errors.USAGE(
            'legacy add-user: --imap-host needs --imap-login and --imap-password-env',
          );
        entry.imap = {
          host: o.imapHost,
          port: o.imapPort || (o.imapTls ? 993 : 143),
          login: o.imapLogin,
          passwordEnv: o.imapPasswordEnv,
          security: o.imapTls ? 'tls' : o.imapPlaintext ? 'plaintext' : 'starttls',
          // The boolean of older entries would otherwise outlive the new setting.
          tls: undefined,
        };
      }
      if (!entry.mboxDir && !entry.maildir && !entry.imap && !entry.relay)
        throw new errors.USAGE(
          'legacy add-user: give --mbox-dir, --maildir, --imap-host and/or --relay',
        );
      // Only the variable's name is stored and printed, never the password.
      const saved = addLegacyUser(ctx.config, user, entry);
      ctx.out(o.json, { user, ...saved }, (x) =>
        process.stderr.write(`legacy storage of ${user}: ${JSON.stringify(x)}\n`),
      );
    });
}

module.exports = { register };
