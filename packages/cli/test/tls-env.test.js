'use strict';

// The IMAP and LMTP listeners read their STARTTLS pair the same way (packages/cli/lib/tls-env.js):
// both or neither variable, readable files, CONFIG_INVALID before anything listens.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { imapSettings } = require('../lib/commands/imap');
const { lmtpSettings } = require('../lib/commands/lmtp');

let dir;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-tls-env-'));
  fs.writeFileSync(path.join(dir, 'cert.pem'), 'CERT');
  fs.writeFileSync(path.join(dir, 'key.pem'), 'KEY');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['IMAP', imapSettings],
  ['LMTP', lmtpSettings],
])('%s_TLS_CERT / %s_TLS_KEY', (prefix, settings) => {
  const read = (env) => settings(env, { host: '127.0.0.1' });

  test('unset: no TLS', () => {
    expect(read({}).tls).toBeNull();
  });

  test('both set: the two files are read', () => {
    const { tls } = read({
      [`${prefix}_TLS_CERT`]: path.join(dir, 'cert.pem'),
      [`${prefix}_TLS_KEY`]: path.join(dir, 'key.pem'),
    });
    expect(tls.cert.toString()).toBe('CERT');
    expect(tls.key.toString()).toBe('KEY');
  });

  test.each(['CERT', 'KEY'])('only _TLS_%s set: CONFIG_INVALID', (which) => {
    const env = { [`${prefix}_TLS_${which}`]: path.join(dir, 'cert.pem') };
    expect(() => read(env)).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining(
          `${prefix}_TLS_CERT and ${prefix}_TLS_KEY must be set together`,
        ),
      }),
    );
  });

  test('an unreadable file: CONFIG_INVALID naming the protocol, not the path', () => {
    const env = {
      [`${prefix}_TLS_CERT`]: path.join(dir, 'missing.pem'),
      [`${prefix}_TLS_KEY`]: path.join(dir, 'key.pem'),
    };
    let err;
    try {
      read(env);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(err.message).toContain(`cannot read the ${prefix} TLS files: ENOENT`);
    expect(err.message).not.toContain(dir);
  });
});
