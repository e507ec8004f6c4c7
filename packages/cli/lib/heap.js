'use strict';

/*
 * The V8 heap of a process that imports mail (`import`, `migrate`): owns the one V8 flag the
 * CLI changes at run time. It must never cap the heap (a big batch may need the room; a cap
 * would turn it into an out-of-memory crash), only make the garbage collector keep up.
 *
 * Why: the import's live data are bounded by the batch (two batches in flight, each parsed,
 * hex-encoded and copied), but every batch survives a few scavenges while PostgreSQL loads it,
 * so its garbage lands in the old generation. V8 sets the next old-generation limit after each
 * major GC at live size × a growing factor that it raises up to 4× when the mutator is fast
 * relative to the GC (a quiet machine): the heap then holds up to four batches' worth of dead
 * data, and the whole-set import's peak RSS varied 332–498 MB with how busy the machine was
 * (docs/benchmarks.md "Import speed"). A fixed factor of 2 keeps the heap at most twice its
 * live data, whatever the timing, for a little more GC work on a main thread that waits for
 * PostgreSQL most of the time. The flag is process-wide: it applies to the parse worker
 * threads too, and is read at every major GC, so setting it at run time takes effect.
 */

const v8 = require('node:v8');

/** Old-generation growth per major GC: the next limit is live × (1 + this / 100). */
const IMPORT_HEAP_GROWING_PERCENT = 100;

/**
 * Makes this process's heaps grow by at most IMPORT_HEAP_GROWING_PERCENT per major GC. For
 * processes whose job is an import (the CLI `import` and `migrate` commands); not for a
 * library or a server sharing the process.
 * @param {number} [percent]
 */
function boundImportHeap(percent = IMPORT_HEAP_GROWING_PERCENT) {
  if (!Number.isInteger(percent) || percent < 1) throw new RangeError('percent: integer ≥ 1');
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

module.exports = { boundImportHeap, IMPORT_HEAP_GROWING_PERCENT };
