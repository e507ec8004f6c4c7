'use strict';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Lines longer than this are never treated as From_ lines (and need not be buffered whole). */
const MAX_FROM_LINE = 4096;

const WEEKDAY_RE = /^(?:mon|tue|wed|thu|fri|sat|sun),?$/i;
const MONTH_RE = /^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec),?$/i;
const DAYNUM_RE = /^\d{1,2},?$/;
const TIME_RE = /^\d{1,2}:\d{2}(?::\d{2})?$/;
const YEAR_RE = /^\d{4}$/;
// Zones seen in the wild: "+0100", "PST", "MET DST", "(PST)". Upper case only, so that ordinary
// lower-case words ("on", "in") cannot pass as a zone.
const ZONE_RE = /^(?:[+-]\d{4}|[A-Z]{1,5}|\([^()]*\))$/;
// UUCP-era envelope suffix (RFC 976).
const REMOTE_FROM_RE = /\s+remote\s+from\s+\S+\s*$/i;

/**
 * @param {string[]} tokens date part of a From_ line, split on blanks
 * @returns {boolean} whether the tokens form an asctime(3)-like date
 */
function isEnvelopeDate(tokens) {
  let weekday = 0;
  let month = 0;
  let day = 0;
  let time = 0;
  let year = 0;
  for (const t of tokens) {
    if (TIME_RE.test(t)) time++;
    else if (YEAR_RE.test(t)) year++;
    else if (DAYNUM_RE.test(t)) day++;
    else if (MONTH_RE.test(t)) month++;
    else if (WEEKDAY_RE.test(t)) weekday++;
    else if (!ZONE_RE.test(t)) return false;
  }
  return time === 1 && year === 1 && month === 1 && day === 1 && weekday <= 1;
}

/**
 * Strict From_ line recognition: `From <sender> <asctime date>` as written by mail delivery
 * agents (`From user@host Sat Jan  3 01:05:34 1996`, optionally with a zone or a `remote from`
 * suffix). Body text such as "From here on 10:30 in 2001" is rejected because every token of the
 * date part must be a weekday, month, day number, time, 4-digit year or zone.
 * @param {Buffer|string} line one line, with or without its line ending
 * @returns {boolean}
 */
function isFromLine(line) {
  if (line.length < 5 || line.length > MAX_FROM_LINE) return false;
  const s = (typeof line === 'string' ? line : line.toString('latin1')).replace(/\r?\n$/, '');
  if (!s.startsWith('From ')) return false;
  const rest = s.slice(5).replace(REMOTE_FROM_RE, '');
  const tokens = rest.split(/[ \t]+/).filter(Boolean);
  // The sender may be empty ("From  Mon ...") or, rarely, contain blanks (quoted local part), so
  // accept the first split point at which the remainder is a valid date.
  for (let k = 0; k < tokens.length; k++) {
    if (tokens.length - k < 4) break;
    if (isEnvelopeDate(tokens.slice(k))) return true;
  }
  return false;
}

/**
 * asctime(3) in UTC: `Sat Jan  3 01:05:34 1996` (day padded with a blank, as ctime does).
 * @param {Date} date
 * @returns {string}
 */
function asctime(date) {
  const p2 = (n) => String(n).padStart(2, '0');
  return (
    `${DAYS[date.getUTCDay()]} ${MONTHS[date.getUTCMonth()]} ` +
    `${String(date.getUTCDate()).padStart(2, ' ')} ` +
    `${p2(date.getUTCHours())}:${p2(date.getUTCMinutes())}:${p2(date.getUTCSeconds())} ` +
    `${date.getUTCFullYear()}`
  );
}

/**
 * Build a From_ line for a message that never had one (Maildir/MH origin).
 * @param {string} [sender] envelope sender; blanks/controls are removed, empty → MAILER-DAEMON
 * @param {Date|string|number} [date] delivery date; invalid/absent → 1970-01-01 (UTC)
 * @returns {Buffer} `From sender asctime-date\n`
 */
function makeFromLine(sender, date) {
  // Envelope senders cannot contain blanks or controls: they would break the line's tokenising.
  let s = [...String(sender == null ? '' : sender)]
    .filter((ch) => ch.charCodeAt(0) > 0x20 && ch.charCodeAt(0) !== 0x7f)
    .join('');
  if (s === '' || s === '<>') s = 'MAILER-DAEMON';
  let d = date instanceof Date ? date : date == null ? new Date(0) : new Date(date);
  if (Number.isNaN(d.getTime())) d = new Date(0);
  // Years outside 1000..9999 would break the 4-digit-year rule readers rely on.
  const y = d.getUTCFullYear();
  if (y < 1000 || y > 9999) d = new Date(0);
  return Buffer.from(`From ${s} ${asctime(d)}\n`, 'latin1');
}

const MONTH_INDEX = Object.fromEntries(MONTHS.map((m, i) => [m, i]));

/**
 * INTERNALDATE from the mbox From_ line (asctime, local time of the delivering host, which
 * the line does not record: read as UTC unless a numeric zone follows).
 * @param {Buffer} line
 * @returns {Date|null}
 */
function fromLineDate(line) {
  if (!line || !line.length) return null;
  const s = line.toString('latin1');
  const m =
    /(\w{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s+(?:([+-]\d{4}|[A-Z]{3,4})\s+)?(\d{4})(?:\s+([+-]\d{4}))?/.exec(
      s,
    );
  if (!m || !(m[1] in MONTH_INDEX)) return null;
  let t = Date.UTC(+m[7], MONTH_INDEX[m[1]], +m[2], +m[3], +m[4], +(m[5] || 0));
  const zone = /^[+-]\d{4}$/.test(m[6] || '') ? m[6] : m[8];
  if (zone) {
    const sign = zone[0] === '-' ? -1 : 1;
    t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3))) * 60000;
  }
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? null : d;
}

module.exports = { isFromLine, makeFromLine, fromLineDate, asctime, MAX_FROM_LINE };
