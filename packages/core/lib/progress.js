'use strict';

/**
 * Progress reporting for long jobs: a one-line bar with count, rate and ETA when stderr is a
 * terminal; JSON lines (one per interval) otherwise, so logs and CI stay parseable.
 *
 * @param {{label: string, total?: number|null, stream?: NodeJS.WriteStream, intervalMs?: number, enabled?: boolean}} opts
 * @returns {{tick: (n?: number, bytes?: number) => void, setTotal: (n: number) => void, setTotalBytes: (n: number) => void, done: () => void}}
 */
function createProgress(opts) {
  const stream = opts.stream || process.stderr;
  const tty = Boolean(stream.isTTY);
  const interval = opts.intervalMs || (tty ? 200 : 2000);
  const started = Date.now();
  let total = opts.total ?? null;
  let totalBytes = null;
  let count = 0;
  let bytes = 0;
  let last = 0;
  const enabled = opts.enabled !== false;

  function render(final) {
    const secs = (Date.now() - started) / 1000;
    const rate = secs > 0 ? count / secs : 0;
    // With a byte total (an mbox file's size) the ETA follows bytes, which is what a
    // mailbox of uneven message sizes makes predictable.
    const byteRate = secs > 0 ? bytes / secs : 0;
    const eta = totalBytes
      ? byteRate > 0
        ? Math.max(0, (totalBytes - bytes) / byteRate)
        : null
      : total && rate > 0
        ? Math.max(0, (total - count) / rate)
        : null;
    if (tty) {
      const pct = totalBytes
        ? Math.min(100, (100 * bytes) / totalBytes)
        : total
          ? Math.min(100, (100 * count) / total)
          : null;
      const width = 24;
      const bar =
        pct === null
          ? ''
          : '[' + '#'.repeat(Math.round((pct / 100) * width)).padEnd(width, '.') + '] ';
      const line =
        `${opts.label} ${bar}${count}${total ? '/' + total : ''} msgs ` +
        `${rate.toFixed(0)}/s ${(bytes / 1048576).toFixed(1)} MB` +
        (eta !== null && !final ? ` ETA ${formatSecs(eta)}` : ` ${formatSecs(secs)}`);
      stream.write('\r' + line.padEnd(78) + (final ? '\n' : ''));
    } else {
      stream.write(
        JSON.stringify({
          progress: opts.label,
          count,
          total,
          bytes,
          rate: Number(rate.toFixed(1)),
          eta: eta === null ? null : Number(eta.toFixed(1)),
          seconds: Number(secs.toFixed(2)),
          done: final || undefined,
        }) + '\n',
      );
    }
  }

  return {
    tick(n = 1, b = 0) {
      count += n;
      bytes += b;
      const now = Date.now();
      if (enabled && now - last >= interval) {
        last = now;
        render(false);
      }
    },
    setTotal(n) {
      total = n;
    },
    setTotalBytes(n) {
      totalBytes = n;
    },
    done() {
      if (enabled) render(true);
    },
  };
}

function formatSecs(s) {
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
}

module.exports = { createProgress };
