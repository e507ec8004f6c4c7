'use strict';

const net = require('node:net');
const path = require('node:path');
const { execFile } = require('node:child_process');

/*
 * The independent client (tools/raw_imap_time.py) frames a large answer exactly: lines split
 * across reads, literals larger than one read, and the buffer compacted behind the reader once
 * it has consumed a megabyte (the reader used to slice its buffer at every line, quadratic in
 * a 9.5 MB list view, which made the client the bottleneck of the cold check).
 */

const PY = path.join(__dirname, '..', 'tools', 'raw_imap_time.py');

/** The answer to the timed command: many short lines, small literals, one 3 MB literal. */
function answer() {
  const parts = [];
  for (let i = 1; i <= 30000; i++) {
    const hdr = Buffer.from(`Subject: message ${i} {9}\r\nFrom: a@b.example\r\n\r\n`);
    parts.push(
      Buffer.from(`* ${i} FETCH (UID ${i} BODY[HEADER.FIELDS (SUBJECT FROM)] {${hdr.length}}\r\n`),
    );
    parts.push(hdr, Buffer.from(')\r\n'));
  }
  const big = Buffer.alloc(3 * 1024 * 1024, 'x\r\n');
  parts.push(
    Buffer.from(`* 30001 FETCH (UID 30001 BODY[] {${big.length}}\r\n`),
    big,
    Buffer.from(')\r\n'),
  );
  return Buffer.concat(parts);
}

/** A server that writes `bytes` in uneven pieces, so lines and literals cross the reads. */
function server(bytes) {
  return net.createServer((sock) => {
    sock.on('error', () => {});
    sock.write('* OK fake\r\n');
    let pending = '';
    sock.on('data', async (d) => {
      pending += d.toString('latin1');
      let i;
      while ((i = pending.indexOf('\r\n')) >= 0) {
        const line = pending.slice(0, i);
        pending = pending.slice(i + 2);
        const tag = line.split(' ')[0];
        if (/ FETCH /.test(line)) {
          const sizes = [1, 7, 4093, 65536, 1 << 20, 13];
          for (let at = 0, k = 0; at < bytes.length; k++) {
            const n = sizes[k % sizes.length];
            sock.write(bytes.subarray(at, at + n));
            at += n;
            if (k % 50 === 0) await new Promise((r) => setImmediate(r));
          }
        }
        sock.write(`${tag} OK done\r\n`);
      }
    });
  });
}

function run(args) {
  return new Promise((resolve, reject) =>
    execFile('python3', [PY, ...args], { maxBuffer: 1 << 20 }, (err, out, errOut) =>
      err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(JSON.parse(out)),
    ),
  );
}

test('raw_imap_time.py reads a large answer to its tagged completion, byte for byte', async () => {
  const bytes = answer();
  const srv = server(bytes);
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  try {
    const { port } = srv.address();
    const out = await run([
      '127.0.0.1',
      String(port),
      'u',
      'p',
      '--select',
      'FETCH 1:* ALL',
      'NOOP',
    ]);
    expect(out.map((o) => o.command)).toEqual(['FETCH 1:* ALL', 'NOOP']);
    // The tagged line is counted too: c3 is the FETCH (LOGIN c1, SELECT c2).
    expect(out[0].status).toBe('c3 OK done');
    expect(out[0].bytes).toBe(bytes.length + 'c3 OK done\r\n'.length);
    expect(out[1]).toMatchObject({ status: 'c4 OK done', bytes: 'c4 OK done\r\n'.length });
  } finally {
    await new Promise((r) => srv.close(r));
  }
}, 60000);
