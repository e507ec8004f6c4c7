'use strict';

/**
 * Graceful shutdown on SIGTERM/SIGINT: close() then exit 0; exit 1 when it fails or takes
 * longer than `timeoutMs` (a stuck request or session must not keep a stopped server alive).
 * One implementation for every long-running command (serve, imap, the API's own server).
 * @param {{info: Function, error: Function}} log
 * @param {() => Promise<void>} close
 * @param {{timeoutMs?: number}} [opts]
 */
function onShutdown(log, close, opts = {}) {
  const onSignal = (sig) => {
    log.info({ sig }, 'shutting down');
    const t = setTimeout(() => {
      log.error('shutdown timed out');
      process.exit(1);
    }, opts.timeoutMs ?? 15000);
    t.unref();
    close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err: { message: err.message } }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

module.exports = { onShutdown };
