'use strict';

/*
 * writer.js responseChunks (issue 35, first fetch): a response with a literal is the Buffers
 * to write in order, the literal's own Buffer among them (not copied into one more Buffer);
 * joined they are responseLine's bytes. Pure.
 */

const { responseChunks, responseLine, atom, literal } = require('../lib/protocol/writer');

test('the literal Buffer is one of the chunks, as it is; joined they make the line', () => {
  const body = Buffer.from('Subject: x\r\n\r\nbody\r\n');
  const parts = [7, atom('FETCH'), [atom('UID'), 42, atom('BODY[]'), literal(body)]];
  const chunks = responseChunks('*', parts);
  expect(chunks).toContain(body);
  expect(chunks.find((c) => c === body)).toBe(body);
  const joined = Buffer.concat(chunks).toString('latin1');
  expect(joined).toBe(
    `* 7 FETCH (UID 42 BODY[] {${body.length}}\r\n${body.toString('latin1')})\r\n`,
  );
  expect(responseLine('*', parts).toString('latin1')).toBe(joined);
});

test('a response without literals is one chunk', () => {
  const chunks = responseChunks('*', [3, atom('EXISTS')]);
  expect(chunks.length).toBe(1);
  expect(chunks[0].toString()).toBe('* 3 EXISTS\r\n');
});
