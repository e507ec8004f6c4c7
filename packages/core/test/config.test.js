'use strict';

const { loadConfig } = require('../lib/config');

// The parse budget and pool settings of issue 15 (see README "Configuration").
test('parse budget defaults', () => {
  const c = loadConfig({});
  expect(c).toMatchObject({
    parseTimeMs: 2000,
    parseMemoryMb: 256,
    renderWorkers: 1,
    dbIdleTimeoutMs: 30000,
    mboxLockWaitMs: 10000,
  });
});

test('parse budget from the environment', () => {
  const c = loadConfig({
    MAILGATE_PARSE_TIME_MS: '0',
    MAILGATE_PARSE_MEMORY_MB: '512',
    MAILGATE_RENDER_WORKERS: '2',
    MAILGATE_DB_IDLE_TIMEOUT_MS: '5',
    MAILGATE_MBOX_LOCK_WAIT_MS: '4000',
  });
  expect(c).toMatchObject({
    parseTimeMs: 0,
    parseMemoryMb: 512,
    renderWorkers: 2,
    dbIdleTimeoutMs: 5,
    mboxLockWaitMs: 4000,
  });
});

test.each([
  ['MAILGATE_PARSE_TIME_MS', '2s'],
  ['MAILGATE_PARSE_TIME_MS', '-1'],
  ['MAILGATE_PARSE_MEMORY_MB', '8'],
  ['MAILGATE_RENDER_WORKERS', '1.5'],
  ['MAILGATE_DB_IDLE_TIMEOUT_MS', '0'],
  ['MAILGATE_MBOX_LOCK_WAIT_MS', 'ten'],
  ['MAILGATE_MBOX_LOCK_WAIT_MS', '0'],
])('%s=%s is refused with CONFIG_INVALID naming it', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(
    expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining(name) }),
  );
});

test('prepared reads: on by default, 0 turns them off, anything but 0 or 1 is refused', () => {
  expect(loadConfig({}).pgPreparedReads).toBe(1);
  expect(loadConfig({ MAILGATE_PG_PREPARED_READS: '0' }).pgPreparedReads).toBe(0);
  for (const bad of ['2', '-1', 'yes']) {
    expect(() => loadConfig({ MAILGATE_PG_PREPARED_READS: bad })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('MAILGATE_PG_PREPARED_READS'),
      }),
    );
  }
});

test('the IMAP body cache: 64 MiB by default, 0 turns it off, a bad value is refused', () => {
  expect(loadConfig({}).imapBodyCacheMb).toBe(64);
  expect(loadConfig({ MAILGATE_IMAP_BODY_CACHE_MB: '0' }).imapBodyCacheMb).toBe(0);
  expect(loadConfig({ MAILGATE_IMAP_BODY_CACHE_MB: '256' }).imapBodyCacheMb).toBe(256);
  for (const bad of ['-1', '1.5', 'lots']) {
    expect(() => loadConfig({ MAILGATE_IMAP_BODY_CACHE_MB: bad })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('MAILGATE_IMAP_BODY_CACHE_MB'),
      }),
    );
  }
});

test('the IMAP list-view cache: 64 MiB by default, 0 turns it off, a bad value is refused', () => {
  expect(loadConfig({}).imapListViewCacheMb).toBe(64);
  expect(loadConfig({ MAILGATE_IMAP_LIST_VIEW_CACHE_MB: '0' }).imapListViewCacheMb).toBe(0);
  expect(loadConfig({ MAILGATE_IMAP_LIST_VIEW_CACHE_MB: '256' }).imapListViewCacheMb).toBe(256);
  for (const bad of ['-1', '1.5', 'lots']) {
    expect(() => loadConfig({ MAILGATE_IMAP_LIST_VIEW_CACHE_MB: bad })).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('MAILGATE_IMAP_LIST_VIEW_CACHE_MB'),
      }),
    );
  }
});
