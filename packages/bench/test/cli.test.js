'use strict';

const { applyVia } = require('../lib/cli');

describe('--via', () => {
  test('api replaces pg and es by their HTTP twins; file backends stay as they are', () => {
    expect(applyVia(['pg', 'es', 'mbox', 'dovecot-maildir'], ['api'])).toEqual([
      'pg-api',
      'es-api',
      'mbox',
      'dovecot-maildir',
    ]);
  });
  test('store,api runs both side by side; store alone changes nothing', () => {
    expect(applyVia(['pg', 'maildir'], ['store', 'api'])).toEqual(['pg', 'pg-api', 'maildir']);
    expect(applyVia(['pg', 'maildir'], ['store'])).toEqual(['pg', 'maildir']);
  });
  test('naming pg-api directly and --via api does not run it twice', () => {
    expect(applyVia(['pg', 'pg-api'], ['api'])).toEqual(['pg-api']);
  });
});
