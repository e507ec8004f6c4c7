'use strict';

/*
 * Issue 30.6, lever 1, the codec not taken: deflate with a preset dictionary against the store's
 * brotli 5 (store/lib/raw-codec.js). The dictionary below is generic mail boilerplate (header
 * names, MIME lines, reply quoting, common English words), nothing of the Enron release's own
 * X- headers. Every 4th message of the Enron set, each compressed alone.
 * Usage: node raw-codec-dictionary-2026-11-28.js /tmp/corpus/enron/maildir
 * Result: bench/results/raw-codec-dictionary-2026-11-28.json
 */
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const DICTIONARY = Buffer.from("Content-Transfer-Encoding: quoted-printable\nContent-Transfer-Encoding: 7bit\nContent-Transfer-Encoding: 8bit\nContent-Transfer-Encoding: base64\nContent-Type: text/plain; charset=\"us-ascii\"\nContent-Type: text/plain; charset=us-ascii\nContent-Type: text/plain; charset=\"iso-8859-1\"\nContent-Type: text/plain; charset=utf-8\nContent-Type: text/html; charset=\"utf-8\"\nContent-Type: multipart/alternative; boundary=\"\nContent-Type: multipart/mixed; boundary=\"\nContent-Disposition: attachment; filename=\"\nMIME-Version: 1.0\nMime-Version: 1.0\nX-Mailer: Microsoft Outlook\nX-MimeOLE: Produced By Microsoft MimeOLE\nReceived: from\n by\n with ESMTP id\n with SMTP id\nReturn-Path: <\nDelivered-To:\nReply-To:\nIn-Reply-To: <\nReferences: <\nMessage-ID: <\nMessage-Id: <\nDate: Mon, Tue, Wed, Thu, Fri, Sat, Sun,  Jan  Feb  Mar  Apr  May  Jun  Jul  Aug  Sep  Oct  Nov  Dec 2001 -0700 (PDT) -0800 (PST) +0000\nFrom:\nTo:\nCc:\nSubject: Re: RE: FW: Fwd:\n -----Original Message-----\nFrom: \nSent: \nTo: \nCc: \nSubject: \nThanks,\nPlease let me know if you have any questions.\n the and to of for you that this with will have are on be is in it we as at from by your\n.com .net .org\n");

function files(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else out.push(p);
  }
  return out;
}

const codecs = [
  [
    'brotli 5 (the store)',
    (b) =>
      zlib.brotliCompressSync(b, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length,
        },
      }),
  ],
  ['deflate 6 + dictionary', (b) => zlib.deflateRawSync(b, { level: 6, dictionary: DICTIONARY })],
  ['deflate 9 + dictionary', (b) => zlib.deflateRawSync(b, { level: 9, dictionary: DICTIONARY })],
];

const sample = files(process.argv[2])
  .sort()
  .filter((_, i) => i % 4 === 0)
  .map((f) => fs.readFileSync(f));
const raw = sample.reduce((s, b) => s + b.length, 0);
const out = { messages: sample.length, raw, dictionaryBytes: DICTIONARY.length, codecs: [] };
for (const [name, enc] of codecs) {
  let bytes = 0;
  let under2k = 0;
  const t = process.cpuUsage();
  for (const b of sample) {
    const n = enc(b).length;
    bytes += n;
    if (b.length < 2032) under2k += n;
  }
  const u = process.cpuUsage(t);
  out.codecs.push({
    name,
    bytes,
    ratio: +(bytes / raw).toFixed(3),
    under2kBytes: under2k,
    encodeUsPerMessage: +((u.user + u.system) / sample.length).toFixed(1),
  });
}
console.log(JSON.stringify(out, null, 2));
