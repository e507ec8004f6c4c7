'use strict';

const { createMailService } = require('@mailgate/service');
const { LoginLimiter, onShutdown } = require('@mailgate/core');
const { startImap, imapSettings } = require('../imap');

/*
 * `mailgate imap`: the IMAP server alone (no HTTP), until SIGTERM/SIGINT, which say `* BYE`
 * to every session before the process ends.
 */

/**
 * Registers `imap`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('imap')
    .description(
      'run the IMAP server alone on IMAP_HOST:IMAP_PORT (default 127.0.0.1:1143) until Ctrl-C',
    )
    .action(async () => {
      imapSettings(process.env, ctx.config); // configuration errors before the database starts
      const service = await createMailService({ config: ctx.config, logger: ctx.log });
      let imap;
      try {
        imap = await startImap({
          service,
          limiter: new LoginLimiter(),
          log: ctx.log,
          config: ctx.config,
        });
      } catch (err) {
        await service.close();
        throw err;
      }
      process.stderr.write(
        `mailgate IMAP listening on ${imap.addresses.join(', ')}; Ctrl-C stops it\n`,
      );
      onShutdown(ctx.log, async () => {
        await imap.server.close();
        await service.close();
      });
      await new Promise(() => {});
    });
}

module.exports = { register };
