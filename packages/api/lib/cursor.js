'use strict';

const { errors } = require('@mailgate/core');

/*
 * The header scan's page cursors as clients see them: opaque base64url JSON that wraps the
 * backend's own cursor with the order it belongs to, so a cursor passed back with another
 * order is a clear INVALID_CURSOR instead of a wrong page. The backend validates its part.
 */

/**
 * @param {string} order `uid`, `-uid`, `date` or `-date`
 * @param {string} inner the backend's nextCursor
 * @returns {string}
 */
function encodeCursor(order, inner) {
  return Buffer.from(JSON.stringify({ o: order, c: inner })).toString('base64url');
}

/**
 * @param {string} text the client's cursor
 * @param {string} order the order of this request
 * @returns {string} the backend's cursor
 * @throws INVALID_CURSOR
 */
function decodeCursor(text, order) {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new errors.INVALID_CURSOR('not a cursor');
  let c;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new errors.INVALID_CURSOR('not a cursor');
  }
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.c !== 'string' ||
    !/^[A-Za-z0-9_-]{1,400}$/.test(c.c)
  ) {
    throw new errors.INVALID_CURSOR('not a cursor');
  }
  if (c.o !== order) {
    throw new errors.INVALID_CURSOR('it belongs to another order; start again without a cursor');
  }
  return c.c;
}

module.exports = { encodeCursor, decodeCursor };
