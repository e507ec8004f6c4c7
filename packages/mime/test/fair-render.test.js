'use strict';

const { renderMessage, closeRequestPool } = require('../lib/request');

// Issue 29.7: the render thread(s) were shared by all users in arrival order, so one user's
// burst of heavy message views made another user's view wait behind all of it. Owners are
// served round-robin: the innocent user's view waits for at most one of the other's per
// turn. Asserts the order of completion, never a time.

afterAll(() => closeRequestPool());

const message = (i) =>
  Buffer.from(
    `From: a@example.org\nSubject: heavy ${i}\nContent-Type: text/html\n\n` +
      '<p>'.repeat(2000) +
      `body ${i} ` +
      '</p>'.repeat(2000) +
      '\n',
  );

test('12 renders of one user, then one of another: the other is not served last', async () => {
  const done = [];
  const burst = Array.from({ length: 12 }, (_, i) =>
    renderMessage(message(i), { owner: 'mallory' }).then(() => done.push(`mallory ${i}`)),
  );
  const innocent = renderMessage(message(99), { owner: 'innocent' }).then(() =>
    done.push('innocent'),
  );
  await Promise.all([...burst, innocent]);
  const at = done.indexOf('innocent');
  process.stdout.write(`fair render: innocent finished ${at + 1} of ${done.length}\n`);
  // One render thread by default (MAILGATE_RENDER_WORKERS): at most one of mallory's renders
  // per thread runs before the innocent's turn, and one started before it arrived.
  expect(at).toBeLessThanOrEqual(2);
});
