'use strict';

/**
 * Server-Timing header value for time spent in the backend (milliseconds).
 * @param {number} ms
 * @returns {string}
 */
function serverTiming(ms) {
  return `pg;dur=${ms.toFixed(2)};desc="backend pg"`;
}

module.exports = { serverTiming };
