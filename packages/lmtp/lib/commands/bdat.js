'use strict';

// BDAT (RFC 3030 CHUNKING): `BDAT size [LAST]`; the chunk's bytes follow the line at once.
// Every chunk is read, even in a refused transaction, so the stream stays in step; LAST
// delivers like DATA (one reply per recipient, RFC 2033 4.3).
const { reply } = require('../protocol/replies');

module.exports = {
  name: 'BDAT',
  async run(s, rest) {
    const m = /^(\d{1,15})(?: +(LAST))?$/i.exec(rest.trim());
    if (!m) {
      // The size is unknown, so the stream cannot be followed any more (RFC 3030 2).
      s.write(reply(501, '5.5.4', 'Syntax: BDAT size [LAST]'));
      return s.close();
    }
    const size = Number(m[1]);
    const last = Boolean(m[2]);
    const ok = s.tx && s.tx.rcpts.length > 0;
    s.framer.expectChunk(size, !(s.tx && s.tx.chunking));
    s.pendingChunk = { last, ok };
    if (s.tx && ok) s.tx.chunking = true;
  },
  /** The chunk's bytes are in (the framer's `chunk` item). */
  async finish(s) {
    const { last, ok } = s.pendingChunk;
    s.pendingChunk = null;
    if (!ok) {
      s.framer.takeMessage(); // dropped
      return s.write(reply(503, '5.5.1', s.tx ? 'No valid recipients' : 'MAIL first'));
    }
    if (!last) {
      return s.write(reply(250, '2.0.0', `${s.framer.size} octets received`));
    }
    const { raw } = s.framer.takeMessage();
    await s.deliverAll(raw);
  },
};
