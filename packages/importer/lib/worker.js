'use strict';

const { parentPort } = require('node:worker_threads');
const { deriveRow } = require('./derive');

parentPort.on('message', ({ id, raws }) => {
  const results = raws.map((r) => deriveRow(Buffer.from(r.buffer, r.byteOffset, r.byteLength)));
  parentPort.postMessage({ id, results });
});
