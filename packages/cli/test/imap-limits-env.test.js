'use strict';

// The IMAP server's abuse limits come from the environment (root README "Security"), are
// validated at start, and reach the server (issue 29 item 3).
const { imapSettings } = require('../lib/commands/imap');
const { createImapServer } = require('../../imap');

test('IMAP_* limit variables are read, checked and passed to the server', () => {
  const env = {
    IMAP_MAX_CONNECTIONS: '500',
    IMAP_MAX_PREAUTH_CONNECTIONS: '100',
    IMAP_MAX_CONNECTIONS_PER_ADDRESS: '4',
    IMAP_MAX_CONNECTIONS_PER_USER: '7',
    IMAP_PREAUTH_TIMEOUT_MS: '15000',
    IMAP_PREAUTH_MAX_BYTES: '32768',
    IMAP_PREAUTH_MAX_LITERAL: '4096',
    IMAP_MAX_UNSENT_BYTES: '100000',
    IMAP_OUTPUT_STALL_TIMEOUT_MS: '5000',
  };
  const s = imapSettings(env, { host: '127.0.0.1' });
  const server = createImapServer({ service: {}, limits: s.limits });
  expect(server.limits).toMatchObject({
    maxConnections: 500,
    maxPreauthConnections: 100,
    maxConnectionsPerAddress: 4,
    maxConnectionsPerUser: 7,
    preauthTimeout: 15000,
    preauthMaxBytes: 32768,
    preauthMaxLiteral: 4096,
    maxUnsentBytes: 100000,
    outputStallTimeout: 5000,
  });
  // Unset: the defaults.
  const d = createImapServer({ service: {}, limits: imapSettings({}, {}).limits }).limits;
  expect(d).toMatchObject({ maxConnectionsPerAddress: 50, preauthTimeout: 60000 });
});

test.each(['0', '-3', '1.5', 'many'])(
  'IMAP_MAX_CONNECTIONS_PER_ADDRESS=%s is CONFIG_INVALID',
  (v) => {
    expect(() => imapSettings({ IMAP_MAX_CONNECTIONS_PER_ADDRESS: v }, {})).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  },
);

test.each([
  ['MAILGATE_IMAP_BODY_CACHE_MB', 'bodyCache'],
  ['MAILGATE_IMAP_LIST_VIEW_CACHE_MB', 'listViewCache'],
])('%s reaches the server that mailgate imap and serve start (%s)', async (name, cache) => {
  const { startImap } = require('../lib/commands/imap');
  const { loadConfig, createLogger } = require('@mailgate/core');
  const log = createLogger({ logLevel: 'silent' });
  for (const [mb, bytes] of [
    ['0', 0],
    ['8', 8 * 1024 * 1024],
  ]) {
    const config = loadConfig({ [name]: mb });
    const { server } = await startImap({
      service: {},
      log,
      env: { IMAP_PORT: '0', IMAP_HOST: '127.0.0.1' },
      config,
    });
    try {
      expect(server[cache].maxBytes).toBe(bytes);
      expect(server[cache].enabled).toBe(bytes > 0);
    } finally {
      await server.close();
    }
  }
});
