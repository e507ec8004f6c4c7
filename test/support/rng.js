'use strict';

/**
 * mulberry32: a small seeded PRNG, uniform in [0, 1). Tests that fuzz or sample use it so a
 * failure names a case that can be rebuilt exactly. (@mailgate/bench has its own copy in lib/:
 * a package's lib never requires test/.)
 * @param {number} seed
 * @returns {() => number}
 */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { rng };
