'use strict';

// APPEND (RFC 3501 6.3.11) with APPENDUID (RFC 4315) and the APPENDLIMIT (RFC 7889) the
// framer enforces on the literal. Stored bytes are exactly the literal's.
const { arity, mailboxArg, flagsArg, astring } = require('../protocol/args');
const { bad } = require('../errors');
const { tryCreate } = require('../listing');
const { MONTHS } = require('./fetch');
const { checkMailboxName } = require('@mailgate/core');

module.exports = {
  name: 'APPEND',
  states: ['auth', 'selected'],
  async run(s, cmd) {
    arity(cmd, 2, 4);
    const args = [...cmd.args];
    const mailbox = mailboxArg(args.shift());
    const message = args.pop();
    if (!message || message.type !== 'literal') throw bad('APPEND needs the message as a literal');
    let flags = [];
    let internalDate;
    for (const a of args) {
      if (a.type === 'list') flags = flagsArg(a).filter((f) => f !== '\\Recent');
      else internalDate = parseDateTime(astring(a, 'date-time'));
    }
    if (!message.value.length) throw bad('Empty message');
    // A name no door may create answers INVALID_MAILBOX_NAME, not TRYCREATE: a client would
    // only try CREATE next and be refused. No other check before the write: the store resolves
    // the mailbox in the append's own statement and a missing one is NO [TRYCREATE] (RFC 3501
    // 6.3.11), so an APPEND costs no extra read.
    checkMailboxName(mailbox);
    let r;
    try {
      r = await s.backend.append(mailbox, message.value, { flags, internalDate });
    } catch (err) {
      throw tryCreate(err);
    }
    return { code: `APPENDUID ${r.uidvalidity} ${r.uid}`, text: 'APPEND completed' };
  },
};

/** date-time (RFC 3501 9): `"17-Jul-1996 02:44:25 -0700"` → Date. */
function parseDateTime(text) {
  const m = /^ ?(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(
    text,
  );
  const mon = m ? MONTHS.findIndex((x) => x.toLowerCase() === m[2].toLowerCase()) : -1;
  if (!m || mon < 0) throw bad('Invalid date-time');
  const utc = Date.UTC(+m[3], mon, +m[1], +m[4], +m[5], +m[6]);
  const offset = (m[7] === '-' ? -1 : 1) * (+m[8] * 60 + +m[9]) * 60000;
  const d = new Date(utc - offset);
  if (Number.isNaN(d.getTime())) throw bad('Invalid date-time');
  return d;
}
