'use strict';

/*
 * The relay's pure parts (relay.js): relay targets as written in legacy.json and the accounts
 * file, and upstream replies taken apart for the LMTP server to pass on. Relaying itself runs
 * against a real Dovecot and Postfix in packages/lmtp/test/relay.pg.test.js.
 */

const { parseRelayTarget, relayTargetText, parseReply } = require('../lib/relay');

test('relay targets: lmtp:// and smtp://, default ports, IPv6, one canonical text', () => {
  expect(parseRelayTarget('lmtp://mx.old.example:2424')).toEqual({
    protocol: 'lmtp',
    host: 'mx.old.example',
    port: 2424,
  });
  expect(parseRelayTarget('lmtp://mx.old.example')).toMatchObject({ port: 24 });
  expect(parseRelayTarget(' smtp://10.0.0.5/ ')).toEqual({
    protocol: 'smtp',
    host: '10.0.0.5',
    port: 25,
  });
  const v6 = parseRelayTarget('lmtp://[::1]:24');
  expect(v6).toEqual({ protocol: 'lmtp', host: '::1', port: 24 });
  expect(relayTargetText(v6)).toBe('lmtp://[::1]:24');
  expect(relayTargetText(parseRelayTarget('smtp://mx'))).toBe('smtp://mx:25');
});

test.each([
  'mx.old.example:24',
  'http://mx:24',
  'lmtp://mx:0',
  'lmtp://mx:70000',
  'lmtp://user@mx:24',
  'lmtp://mx:24/path',
  '',
  null,
])('a relay target that is not one is RELAY_INVALID: %p', (text) => {
  expect(() => parseRelayTarget(text)).toThrow(expect.objectContaining({ code: 'RELAY_INVALID' }));
});

test('upstream replies: code, enhanced code and text; the last line of a multi-line one', () => {
  expect(parseReply('250 2.0.0 <pat@example.com> xyz Saved')).toEqual({
    code: 250,
    enhanced: '2.0.0',
    text: '<pat@example.com> xyz Saved',
  });
  expect(parseReply("550-5.1.1 first\r\n550 5.1.1 <x> User doesn't exist")).toEqual({
    code: 550,
    enhanced: '5.1.1',
    text: "<x> User doesn't exist",
  });
  expect(parseReply('451 Try later')).toEqual({ code: 451, enhanced: null, text: 'Try later' });
  expect(parseReply('250 ' + 'x'.repeat(500)).text).toHaveLength(200);
  expect(parseReply('garbage')).toBeNull();
  expect(parseReply('')).toBeNull();
});
