'use strict';

/*
 * What one password hash costs at each scrypt N (r = 8, p = 1): the median and minimum of
 * seven hashes in a row, for choosing MAILGATE_SCRYPT_N/R/P (packages/core/README.md).
 *
 *   node packages/bench/bin/mailgate-bench.js kdf-cost
 */

const { hashPassword } = require('@mailgate/core');

/** `bench kdf-cost` (no options). */
async function main() {
  for (const n of [16384, 32768, 65536, 131072]) {
    const t = [];
    for (let i = 0; i < 7; i++) {
      const a = process.hrtime.bigint();
      await hashPassword('correct horse battery', { n, r: 8, p: 1 });
      t.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
    t.sort((x, y) => x - y);
    const mib = (128 * n * 8) / 2 ** 20;
    console.log(
      `N=${n} r=8 p=1 memory=${mib} MiB median=${t[3].toFixed(1)} ms min=${t[0].toFixed(1)} ms`,
    );
  }
}

module.exports = {
  description: 'cost of one scrypt password hash at each N (choosing MAILGATE_SCRYPT_N)',
  usage: '',
  run: main,
};
