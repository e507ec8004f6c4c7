'use strict';

const { Readable } = require('node:stream');

/*
 * NDJSON answers (Accept: application/x-ndjson): the whole mailbox as one header row per
 * line, streamed from the backend.
 */

const NDJSON = 'application/x-ndjson';

/**
 * @param {import('fastify').FastifyRequest} req
 * @returns {boolean} true when the client asked for NDJSON
 */
function wantsNdjson(req) {
  const a = req.headers.accept;
  return typeof a === 'string' && a.toLowerCase().includes(NDJSON);
}

/**
 * Reads the first chunk (opening the stream on the backend), then returns a stream that
 * replays it followed by the rest: a backend error before the first rows is still a proper
 * JSON error, and Server-Timing (a header) can carry the time to the first rows. Destroying
 * the returned stream (client gone) destroys the source, which ends the backend's work and
 * returns its connection.
 * @param {import('node:stream').Readable} source
 * @returns {Promise<import('node:stream').Readable>}
 */
async function primed(source) {
  const it = source[Symbol.asyncIterator]();
  const first = await it.next();
  async function* rest() {
    try {
      if (!first.done) yield first.value;
      for (;;) {
        const n = await it.next();
        if (n.done) return;
        yield n.value;
      }
    } finally {
      if (!source.destroyed) source.destroy();
    }
  }
  return Readable.from(rest(), { objectMode: false });
}

module.exports = { NDJSON, wantsNdjson, primed };
