'use strict';

const { PgStore, mixIn } = require('@mailgate/store');

// Two concerns both defined `listUsers`; the later silently replaced the earlier and
// `mailgate es verify` searched ES for user `undefined`. A repeated name now fails at load.
test('a method name defined by two store concerns is refused', () => {
  class Target {
    a() {}
  }
  expect(() => mixIn(Target.prototype, { b() {} }, { b() {} })).toThrow(/b is defined twice/);
  expect(() => mixIn(Target.prototype, { a() {} })).toThrow(/a is defined twice/);
});

test('the store loads with every concern under its own names', () => {
  for (const name of ['listUsers', 'userSummaries', 'deleteUser'])
    expect(typeof PgStore.prototype[name]).toBe('function');
});
