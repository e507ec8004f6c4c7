'use strict';
// usage: node deliver-cpu-2026-11-28-stages.js [TREE]
// Node CPU per message of each stage of an append, each stage alone, on the 22,001st-23,000th
// corpus messages (MAILGATE_CORPUS / the bench's corpus), two passes (the first one cold).
// TREE: the mailgate checkout measured (default: the repo this script lives in).
// node-stages.txt (bench/results/deliver-2026-11-28-cpu-split/) was measured on the tree at
// 4c23c64, which still had messages.header_json: there the script also times `headerJson` and
// puts `header_json` in the knex insert. ae14026 dropped the column and `headerJson`; on such a
// tree the headerJson stage is skipped (printed as skipped) and the insert has no header_json,
// so its knex figure is not comparable with node-stages.txt's.
const path = require('path');
const fs = require('fs');
const crypto = require('crypto');
const W = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..'));
const at = (p) => require(path.join(W, p));
const { listMessages, messageRoot } = at('packages/bench/lib/mailboxes');
const { corpusDir } = at('packages/bench/lib/command-kit');
const { deriveRow, imapMetaOf } = at('packages/importer');
const { parseMessage } = at('packages/mime');
const { encodeRaw } = at('packages/store/lib/raw-codec');
const { headerJson } = at('packages/store/lib/header-row'); // undefined after ae14026
const knex = at('node_modules/knex')({ client: 'pg' });
const files = listMessages(messageRoot(corpusDir()), 23000).slice(22000);
const mail = files.map((f) => fs.readFileSync(f));
function t(name, fn) {
  for (const m of mail.slice(0, 100)) fn(m);
  const u0 = process.cpuUsage();
  for (const m of mail) fn(m);
  const u = process.cpuUsage(u0);
  console.log(name.padEnd(14), ((u.user + u.system) / mail.length).toFixed(1), 'us');
}
console.log(
  `# tree ${W}${headerJson ? '' : ' (no headerJson: that stage skipped, insert without header_json)'}`,
);
for (let r = 0; r < 2; r++) {
  t('deriveRow', (m) => deriveRow(m));
  t('parseMessage', (m) => parseMessage(m));
  t('imapMetaOf', (m) => imapMetaOf(m));
  t('encodeRaw', (m) => encodeRaw(m));
  t('sha256', (m) => crypto.createHash('sha256').update(m).digest());
  const rows = mail.map((m) => deriveRow(m).row);
  let i = 0;
  if (headerJson) t('headerJson', () => headerJson(rows[i++ % rows.length]));
  else console.log('headerJson'.padEnd(14), 'skipped');
  i = 0;
  t('knex insert', () => {
    const row = { ...rows[i++ % rows.length] };
    delete row.imap;
    if (headerJson) row.header_json = headerJson(row);
    return knex('messages').insert([row]).toSQL();
  });
}
