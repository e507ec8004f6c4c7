'use strict';

/*
 * mulberry32, the seeded PRNG tests use to fuzz or sample, so a failure names a case that can
 * be rebuilt exactly. It is the bench's own (`@mailgate/bench` rng): one copy.
 */
const { rng } = require('@mailgate/bench');

module.exports = { rng };
