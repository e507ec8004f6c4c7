'use strict';

/*
 * Fetch one message through the IMAP door (issue 28: `UID FETCH n (BODY.PEEK[])` of a typical
 * message on the large mailbox, ≤ 1 ms warm): mailgate's IMAP server on the pg store and
 * Dovecot on the same Maildir, both timed by the bench's raw client (RawImapClient: writes the
 * command, reads to the tagged OK, parses nothing) in one run. A typical message: the bench
 * mailbox's messages around the median size (--messages of them picked evenly from the middle half of
 * the sizes); each is fetched once untimed (warm), then --rounds timed rounds over all of them,
 * the servers alternating per round so that a busy moment of the machine hits both.
 *
 *   npm run bench:imap-fetch -- [--size large] [--rounds 50] [--messages 20]
 *        [--work DIR] [--out FILE]
 *
 * Also: `--item 'BODY.PEEK[]'` to time another fetch item list.
 */

const { SIZES } = require('../mailboxes');
const {
  withImapPair,
  rawSession,
  median,
  spread,
  writeRun,
  pairMailbox,
  messageSizes,
  typicalBySize,
} = require('../imap-pair');
const { option } = require('../command-kit');

/**
 * `bench imap-fetch`: see the file comment.
 * @param {string[]} args --size, --rounds, --messages, --item, --work, --out
 */
async function main(args) {
  const SIZE = option(args, '--size', 'large');
  const ROUNDS = Number(option(args, '--rounds', 50));
  const MESSAGES = Number(option(args, '--messages', 20));
  const ITEM = option(args, '--item', 'BODY.PEEK[]');
  const { work: WORK, box } = pairMailbox(args, SIZE, { log: true });
  const open = async (ep) => {
    const raw = await rawSession(ep);
    await raw.command('SELECT INBOX');
    const picked = typicalBySize(await messageSizes(raw), MESSAGES);
    for (const m of picked) await raw.command(`UID FETCH ${m.uid} (${ITEM})`); // warm
    return { raw, picked, ms: [], close: () => raw.logout() };
  };
  const sides = await withImapPair(
    { box, work: WORK, size: SIZE, settle: true },
    open,
    async (sides) => {
      for (let r = 0; r < ROUNDS; r++) {
        for (const side of r % 2 ? [...sides].reverse() : sides) {
          for (const m of side.picked) {
            const a = await side.raw.command(`UID FETCH ${m.uid} (${ITEM})`);
            if (!/^\S+ OK/m.test(a.text().split('\r\n').slice(-2).join('\n')))
              throw new Error(`${side.server.name}: ${a.text().slice(-200)}`);
            side.ms.push(a.ms);
          }
        }
      }
    },
  );
  const results = sides.map((s) => ({
    server: s.server.name,
    door: 'imap',
    size: SIZE,
    messages: SIZES[SIZE],
    request: `UID FETCH n (${ITEM})`,
    phase: 'warm',
    samples: s.ms.length,
    messageBytes: { median: median(s.picked.map((m) => m.size)) },
    ms: spread(s.ms, 3),
  }));
  writeRun({ work: WORK, file: option(args, '--out', null), results });
}

module.exports = {
  description: 'UID FETCH of a typical message: mailgate vs Dovecot-maildir, raw client',
  usage: '[--size large] [--rounds 50] [--messages 20] [--item ITEMS] [--work DIR] [--out FILE]',
  run: main,
};
