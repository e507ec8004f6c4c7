'use strict';

/**
 * Progress reporting for long jobs: a one-line bar with count, rate and ETA when stderr is a
 * terminal; JSON lines (one per interval) otherwise, so logs and CI stay parseable.
 *
 * Work that an earlier run already did (a resumed import's entries before its checkpoint, only
 * re-hashed) is counted apart with skip(): it moves the bar but not the rate, and the ETA is
 * the work left at the rate of new work alone (issue 30.9: a resume used to show `ETA 4.7s`
 * with 100 s to go, its fast re-hashing taken for import speed).
 *
 * @param {{label: string, total?: number|null, stream?: NodeJS.WriteStream, intervalMs?: number, enabled?: boolean, now?: () => number}} opts
 *   now: the clock in ms (tests)
 * @returns {{tick: (n?: number, bytes?: number) => void, skip: (n?: number, bytes?: number) => void, setTotal: (n: number) => void, setTotalBytes: (n: number) => void, done: () => void}}
 */
function createProgress(opts) {
  const stream = opts.stream || process.stderr;
  const now = opts.now || Date.now;
  const tty = Boolean(stream.isTTY);
  const interval = opts.intervalMs || (tty ? 200 : 2000);
  const started = now();
  let total = opts.total ?? null;
  let totalBytes = null;
  let count = 0;
  let bytes = 0;
  let skipped = 0;
  let skippedBytes = 0;
  let newSince = null; // when the first new entry came: the rate's clock starts there
  let last = 0;
  const enabled = opts.enabled !== false;

  function render(final) {
    const t = now();
    const secs = (t - started) / 1000;
    const newSecs = newSince === null ? 0 : (t - newSince) / 1000;
    const rate = newSecs > 0 ? count / newSecs : 0;
    // With a byte total (an mbox file's size) the ETA follows bytes, which is what a
    // mailbox of uneven message sizes makes predictable.
    const byteRate = newSecs > 0 ? bytes / newSecs : 0;
    const eta = totalBytes
      ? byteRate > 0
        ? Math.max(0, (totalBytes - skippedBytes - bytes) / byteRate)
        : null
      : total && rate > 0
        ? Math.max(0, (total - skipped - count) / rate)
        : null;
    const seen = count + skipped;
    if (tty) {
      const pct = totalBytes
        ? Math.min(100, (100 * (bytes + skippedBytes)) / totalBytes)
        : total
          ? Math.min(100, (100 * seen) / total)
          : null;
      const width = 24;
      const bar =
        pct === null
          ? ''
          : '[' + '#'.repeat(Math.round((pct / 100) * width)).padEnd(width, '.') + '] ';
      const line =
        `${opts.label} ${bar}${seen}${total ? '/' + total : ''} msgs ` +
        (skipped ? `(${skipped} done before) ` : '') +
        `${rate.toFixed(0)}/s ${(bytes / 1048576).toFixed(1)} MB` +
        (eta !== null && !final ? ` ETA ${formatSecs(eta)}` : ` ${formatSecs(secs)}`);
      stream.write('\r' + line.padEnd(78) + (final ? '\n' : ''));
    } else {
      stream.write(
        JSON.stringify({
          progress: opts.label,
          count,
          skipped,
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

  function maybeRender() {
    const t = now();
    if (enabled && t - last >= interval) {
      last = t;
      render(false);
    }
  }

  return {
    /** New work: n entries of b bytes. */
    tick(n = 1, b = 0) {
      if (newSince === null) newSince = now();
      count += n;
      bytes += b;
      maybeRender();
    },
    /** Entries an earlier run did: shown apart, kept out of the rate and the ETA. */
    skip(n = 1, b = 0) {
      skipped += n;
      skippedBytes += b;
      maybeRender();
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
