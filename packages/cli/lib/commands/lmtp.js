'use strict';

const { createMailService } = require('@mailgate/service');
const { onShutdown } = require('@mailgate/core');
const { startLmtp, lmtpSettings } = require('../lmtp');

/*
 * `mailgate lmtp`: the LMTP server alone, until SIGTERM/SIGINT, which let deliveries in
 * progress finish (and answer) before the process ends.
 */

/**
 * Registers `lmtp`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('lmtp')
    .description(
      'run the LMTP server alone on LMTP_HOST:LMTP_PORT (default 127.0.0.1:2424) and/or the unix socket LMTP_SOCKET until Ctrl-C',
    )
    .action(async () => {
      lmtpSettings(process.env, ctx.config); // configuration errors before the database starts
      const service = await createMailService({ config: ctx.config, logger: ctx.log });
      let lmtp;
      try {
        lmtp = await startLmtp({ service, log: ctx.log, config: ctx.config });
      } catch (err) {
        await service.close();
        throw err;
      }
      process.stderr.write(
        `mailgate LMTP listening on ${lmtp.addresses.join(', ')}; Ctrl-C stops it\n`,
      );
      onShutdown(ctx.log, async () => {
        await lmtp.server.close();
        await service.close();
      });
      await new Promise(() => {});
    });
}

module.exports = { register };
