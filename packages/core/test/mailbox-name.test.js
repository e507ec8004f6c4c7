'use strict';

const { checkMailboxName, mailboxNameProblem, canonicalMailboxName } = require('../lib');

// The one rule every door applies (issue 29.6): names an exporter could follow out of --out,
// and control characters, are refused with INVALID_MAILBOX_NAME.
describe('checkMailboxName', () => {
  test.each(['..', '.', '../x', 'x/..', 'a/../b', 'a/./b', './a', 'x/../../y', ''])(
    'refuses %j',
    (name) => {
      expect(() => checkMailboxName(name)).toThrow(
        expect.objectContaining({ code: 'INVALID_MAILBOX_NAME', statusCode: 400 }),
      );
    },
  );

  test.each(['a\u0000b', 'a\rb', 'a\nb', 'tab\there', 'bell\u0007', 'del\u007f', 'c1\u0085'])(
    'refuses the control character in %j, shown escaped',
    (name) => {
      let err;
      try {
        checkMailboxName(name);
      } catch (e) {
        err = e;
      }
      expect(err.code).toBe('INVALID_MAILBOX_NAME');
      expect(err.message).toMatch(/control character/);
      expect([...err.message].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007f')).toBe(false);
    },
  );

  test.each(['INBOX', 'Sent Items', 'a.b', '..hidden', 'x/...', 'Fine/Name..ok', 'Ünïcode/日本'])(
    'accepts %j',
    (name) => {
      expect(checkMailboxName(name)).toBe(name);
      expect(mailboxNameProblem(name)).toBeNull();
    },
  );

  test('too long', () => {
    expect(mailboxNameProblem('x'.repeat(513))).toMatch(/longer than 512/);
    expect(mailboxNameProblem('x'.repeat(512))).toBeNull();
  });

  test('the canonical form is unchanged', () => {
    expect(canonicalMailboxName('inbox/x')).toBe('INBOX/x');
  });
});
