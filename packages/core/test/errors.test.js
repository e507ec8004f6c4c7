'use strict';

const { errors, isCoded } = require('../lib');

// PORT_IN_USE's hint names the variables of the listener that failed: PORT/HOST (the HTTP
// API) unless the caller names others (the IMAP server's IMAP_PORT/IMAP_HOST).
describe('PORT_IN_USE', () => {
  test('defaults to the HTTP API variables', () => {
    const e = new errors.PORT_IN_USE(3000, '127.0.0.1');
    expect(e.message).toBe(
      'Port 3000 on 127.0.0.1 is already in use (set PORT/HOST or stop the other server)',
    );
    expect(e).toBeInstanceOf(errors.PORT_IN_USE);
    expect([e.code, e.statusCode, isCoded(e)]).toEqual(['PORT_IN_USE', 500, true]);
  });

  test('names the IMAP variables when given', () => {
    expect(errors.PORT_IN_USE(1430, '127.0.0.1', 'IMAP_PORT/IMAP_HOST').message).toBe(
      'Port 1430 on 127.0.0.1 is already in use (set IMAP_PORT/IMAP_HOST or stop the other server)',
    );
  });
});

test('OUTPUT_NOT_WRITABLE names the path and the reason', () => {
  const e = new errors.OUTPUT_NOT_WRITABLE(
    '/tmp/nodir/x.mbox',
    'the folder /tmp/nodir does not exist',
  );
  expect([e.code, e.message]).toEqual([
    'OUTPUT_NOT_WRITABLE',
    'Cannot write /tmp/nodir/x.mbox: the folder /tmp/nodir does not exist',
  ]);
});
