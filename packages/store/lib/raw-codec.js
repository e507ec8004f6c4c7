'use strict';

/*
 * The stored form of a message's raw bytes (message_sources.raw with its raw_codec), issue
 * 30.6: the only place that encodes or decodes it. PostgreSQL compresses a value only once its
 * row passes ~2 KB (TOAST_TUPLE_THRESHOLD), so half of the Enron messages were stored as they
 * are; the store compresses every message itself instead, one message at a time, and every
 * reader gets the exact bytes back through decodeRaw. COPY/MOVE copy the stored form as is.
 *
 * Codecs (a stored row's raw_codec; a value once written is never reinterpreted, so a codec
 * number is never reused or changed):
 *   0  the bytes as they are (rows written before 20261201140100_raw_codec.js, messages over
 *      PACK_LIMIT, and messages that do not get smaller)
 *   1  brotli, quality 5, text mode, one message per stream. Chosen by measurement
 *      (bench/results/raw-codec-2026-11-28.json, every 4th Enron message): 0.391 of the raw
 *      bytes against 0.409 for deflate level 6 and 0.429 for brotli 3, ~94 µs to compress and
 *      ~20 µs to decompress a message; quality 6-7 saves < 0.1% more for 6-38% more CPU.
 *      Brotli's built-in dictionary (English and HTML words) is what small mail needs, with
 *      no dictionary of our own to ship and keep forever.
 *
 * Messages over PACK_LIMIT keep codec 0: PostgreSQL still compresses them (pglz/lz4 in TOAST)
 * and, unlike a brotli stream, reads a prefix of them (a header FETCH of a 50 MB message)
 * without decompressing the rest.
 *
 * Must never: run SQL, or hand a caller the stored form in place of the message's bytes.
 */
const util = require('node:util');
const zlib = require('node:zlib');

/** raw_codec values. */
const CODEC = Object.freeze({ PLAIN: 0, BROTLI: 1 });

/** Bytes above which a message is left to PostgreSQL's own compression (prefix reads). */
const PACK_LIMIT = 1024 * 1024;
// Decoded bytes per stored byte guessed for brotli's output buffer (outputGuess): Enron text is
// kept at ~0.32-0.39 of its size, 2.6-3.1 decoded bytes a stored one; fitted() copies the rest.
const GUESS_RATIO = 3.2;

const BROTLI_QUALITY = 5;

/** Bytes above which encodeRawAsync compresses off the event loop. */
const ASYNC_OVER = 32 * 1024;

const brotliCompress = util.promisify(zlib.brotliCompress);

/**
 * The stored form of a message.
 * @param {Buffer} raw the message's bytes
 * @returns {{raw: Buffer, raw_codec: number}} the columns to store
 */
function encodeRaw(raw) {
  if (!raw.length || raw.length > PACK_LIMIT) return { raw, raw_codec: CODEC.PLAIN };
  return chosen(raw, zlib.brotliCompressSync(raw, brotliOptions(raw)));
}

/**
 * encodeRaw for a server's write path: a message over ASYNC_OVER is compressed on libuv's
 * thread pool, so one user's large appends (~15 ms a MiB) do not stall every other session of
 * the process; smaller ones are cheaper to compress at once than to hand over.
 * @param {Buffer} raw the message's bytes
 * @returns {Promise<{raw: Buffer, raw_codec: number}>}
 */
async function encodeRawAsync(raw) {
  if (raw.length <= ASYNC_OVER || raw.length > PACK_LIMIT) return encodeRaw(raw);
  return chosen(raw, await brotliCompress(raw, brotliOptions(raw)));
}

function brotliOptions(raw) {
  return {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  };
}

/** Incompressible bytes (an already compressed attachment) stay as they are. */
function chosen(raw, packed) {
  if (packed.length >= raw.length) return { raw, raw_codec: CODEC.PLAIN };
  return { raw: packed, raw_codec: CODEC.BROTLI };
}

/**
 * A message's bytes from its stored form.
 * @param {Buffer} stored message_sources.raw
 * @param {number|string|null|undefined} codec message_sources.raw_codec (absent: 0)
 * @param {number|null} [prefix] only the first `prefix` bytes are wanted
 * @returns {Buffer}
 */
function decodeRaw(stored, codec, prefix = null) {
  let raw;
  switch (Number(codec) || 0) {
    case CODEC.PLAIN:
      raw = stored;
      break;
    case CODEC.BROTLI:
      raw = fitted(zlib.brotliDecompressSync(stored, { chunkSize: outputGuess(stored.length) }));
      break;
    default:
      // A codec this code does not know: a newer writer. Never guess at the bytes.
      throw new Error(`message_sources.raw_codec ${codec} is unknown to this version`);
  }
  if (prefix == null || raw.length <= prefix) return raw;
  // A copy for a decompressed stream: a view would keep the whole message alive (a 64 KiB
  // prefix of a 1 MiB message, times a batch of 500 header reads).
  return codec && Number(codec) !== CODEC.PLAIN
    ? Buffer.from(raw.subarray(0, prefix))
    : raw.subarray(0, prefix);
}

/**
 * The output buffer brotli decodes a stored value into (zlib chunkSize): about the message's
 * size, so a message comes out as one Buffer holding little beside it. Node's default (16 KiB)
 * gave every small message a 16 KiB allocation it was a view of, which a cache keeping the
 * bytes then had to copy; a message larger than the guess comes out of more chunks joined, as
 * before. Brotli keeps Enron mail at ~0.32-0.39 of its size (file comment), so GUESS_RATIO× the
 * stored size covers most text with little to spare.
 * @param {number} storedLength
 * @returns {number}
 */
function outputGuess(storedLength) {
  return Math.min(Math.max(Math.ceil(storedLength * GUESS_RATIO) + 256, 1024), PACK_LIMIT + 1);
}

/**
 * The decoded bytes in an allocation of about their size: a message that compresses worse than
 * the guess (attachments, base64: ~0.75) came out as a view of an allocation ~3× its size,
 * alive as long as the bytes (an IMAP FETCH batch of 500, the body cache), so such a one is
 * copied once into its own (review finding 5, s7). A well-guessed one is returned as it is.
 * @param {Buffer} buf
 * @returns {Buffer}
 */
function fitted(buf) {
  const slack = buf.buffer.byteLength - buf.length;
  if (slack <= Math.max(buf.length / 4, 1024)) return buf;
  const own = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(own);
  return own;
}

/**
 * The SQL expression that reads a stored row for decodeRaw: a prefix of a plain value is cut
 * by PostgreSQL (which then decompresses and sends only that much), a packed value is read
 * whole (it is only a stream as a whole).
 * @param {string} alias message_sources' alias in the statement
 * @param {boolean} prefix whether the statement binds a prefix length (`?::int`) here
 * @returns {string}
 */
function rawColumnSql(alias, prefix) {
  return prefix
    ? `CASE WHEN ${alias}.raw_codec = 0 THEN substring(${alias}.raw from 1 for ?::int) ELSE ${alias}.raw END AS raw, ${alias}.raw_codec`
    : `${alias}.raw, ${alias}.raw_codec`;
}

module.exports = {
  CODEC,
  PACK_LIMIT,
  ASYNC_OVER,
  encodeRaw,
  encodeRawAsync,
  decodeRaw,
  rawColumnSql,
};
