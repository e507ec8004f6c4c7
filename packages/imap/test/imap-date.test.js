'use strict';

// FETCH's INTERNALDATE text (commands/fetch.js imapDate, which keeps day texts and formats the
// time from a table): the text of the field-by-field formatting it replaced, for every kind of
// date (before 1970, leap days, the ends of the Date range, invalid values, strings, numbers).

const { imapDate, MONTHS } = require('../lib/commands/fetch');

/** The formatting imapDate had before it kept day texts (the reference). */
function fieldByField(value) {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return '01-Jan-1970 00:00:00 +0000';
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

describe('imapDate', () => {
  test('the same text as field-by-field formatting', () => {
    const values = [
      new Date(0),
      new Date(-1),
      new Date(-86400000 * 365.25 * 30 - 1234567),
      new Date(Date.UTC(2001, 1, 28, 23, 59, 59, 999)),
      new Date(Date.UTC(2000, 1, 29, 0, 0, 0)),
      new Date(Date.UTC(9999, 11, 31, 23, 59, 59)),
      new Date(Date.UTC(12345, 0, 1, 1, 2, 3)),
      new Date(-8.64e15),
      new Date(8.64e15),
      new Date(NaN),
      '2001-05-14T16:39:00.000Z',
      '2001-05-14 09:39:00-07',
      'not a date',
      1e12,
    ];
    // Many days, more than the day texts kept (4,096): the table is cleared and refilled.
    for (let i = 0; i < 6000; i++) values.push(new Date(Date.UTC(1999, 0, 1) + i * 97531234));
    for (const v of values) expect([v, imapDate(v)]).toEqual([v, fieldByField(v)]);
  });
});
