'use strict';

const { messageKey, KeyMap } = require('../lib/keys');

describe('comparison keys', () => {
  const msg = (body, eol = '\n') =>
    Buffer.from(['Message-ID: <A@x>', 'Subject: s', '', ...body, ''].join(eol));

  test('the same message served by different stores has one key', () => {
    const original = msg(['hi', '>From here', 'From there']);
    const k = messageKey(original);
    expect(k).toMatch(/^<a@x>\|[0-9a-f]{16}$/);
    // CRLF, mboxrd quoting as Dovecot's mbox driver serves it, an added trailing newline.
    expect(messageKey(msg(['hi', '>From here', 'From there'], '\r\n'))).toBe(k);
    expect(messageKey(msg(['hi', '>>From here', '>From there']))).toBe(k);
    expect(messageKey(Buffer.concat([original, Buffer.from('\n')]))).toBe(k);
    // Servers' own headers do not count; the body does.
    expect(messageKey(Buffer.from('Status: RO\n' + original.toString()))).toBe(k);
    expect(messageKey(msg(['hi!', '>From here', 'From there']))).not.toBe(k);
  });

  test('KeyMap resolves duplicate messages to distinct uids', () => {
    const m = new KeyMap();
    m.add(1, 'a');
    m.add(2, 'b');
    m.add(3, 'a');
    expect(m.uidsOf(['a', 'a', 'b', 'zz'])).toEqual([1, 3, 2]);
    expect(m.uidsOf(['a'])).toEqual([1]);
    expect(m.keysOf([3, 2, 9])).toEqual(['a', 'b', '?uid:9']);
  });
});
