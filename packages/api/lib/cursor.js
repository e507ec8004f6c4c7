'use strict';

const { errors } = require('@mailgate/core');

/*
 * Keyset cursors of the header scan. Opaque to clients: base64url JSON of the order and the
 * position (uid, and the sort date for date orders). A cursor is only valid for the order
 * it was made for.
 */

/**
 * @param {string} order `uid`, `-uid`, `date` or `-date`
 * @param {{uid: number, date: string}} pos the last row of the page
 * @returns {string}
 */
function encodeCursor(order, pos) {
  const o = { o: order, u: pos.uid };
  if (order.endsWith('date')) o.d = pos.date;
  return Buffer.from(JSON.stringify(o)).toString('base64url');
}

const SORT_DATE_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

/**
 * @param {string} text the client's cursor
 * @param {string} order the order of this request
 * @returns {{uid: number, date?: string}}
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
  if (!c || typeof c !== 'object' || c.o !== order) {
    throw new errors.INVALID_CURSOR('it belongs to another order; start again without a cursor');
  }
  if (!Number.isSafeInteger(c.u) || c.u < 0) throw new errors.INVALID_CURSOR('bad position');
  if (order.endsWith('date') && !(typeof c.d === 'string' && SORT_DATE_RE.test(c.d))) {
    throw new errors.INVALID_CURSOR('bad position');
  }
  return { uid: c.u, date: c.d };
}

module.exports = { encodeCursor, decodeCursor };
