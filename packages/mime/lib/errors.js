'use strict';

/**
 * Thrown by {@link parseMessage} only when the input is not a mail message at all
 * (empty, binary, no header, NUL in the header, over the size limit), or when it is over the
 * parse budget ('too-complex': stored raw, never parsed further). Anything that is a
 * message, however broken, parses with best effort and warnings instead.
 */
class MessageParseError extends Error {
  /**
   * @param {string} reason short machine-readable code: 'empty' | 'too-large' | 'binary' |
   *   'no-header' | 'nul-in-header' | 'too-complex' (over the parse budget)
   * @param {string} message human-readable explanation
   */
  constructor(reason, message) {
    super(message);
    this.name = 'MessageParseError';
    this.reason = reason;
  }
}

module.exports = { MessageParseError };
