'use strict';

/**
 * Runs a resumable job with Ctrl-C (SIGINT) and SIGTERM turned into an abort signal: the
 * first signal lets the job finish its current batch and stop at a resumable point, a second
 * one exits at once (130, as a shell reports SIGINT).
 * @template T
 * @param {(signal: AbortSignal) => Promise<T>} job
 * @returns {Promise<T>}
 */
async function withInterrupt(job) {
  const ac = new AbortController();
  const onSig = () => {
    if (ac.signal.aborted) process.exit(130);
    process.stderr.write(
      '\nmailgate: interrupted — finishing the current batch; run the same command again to resume\n',
    );
    ac.abort();
  };
  process.on('SIGINT', onSig);
  process.on('SIGTERM', onSig);
  try {
    return await job(ac.signal);
  } finally {
    process.off('SIGINT', onSig);
    process.off('SIGTERM', onSig);
  }
}

module.exports = { withInterrupt };
