'use strict';
const W='/work/wt-deliver/';
const fs=require('fs');
const { listMessages, messageRoot } = require(W+'packages/bench/lib/mailboxes');
const { corpusDir } = require(W+'packages/bench/lib/command-kit');
const { deriveRow, imapMetaOf } = require(W+'packages/importer');
const { parseMessage } = require(W+'packages/mime');
const { encodeRaw } = require(W+'packages/store/lib/raw-codec');
const { headerJson } = require(W+'packages/store/lib/header-row');
const crypto=require('crypto');
const knex=require(W+'node_modules/knex')({client:'pg'});
const files = listMessages(messageRoot(corpusDir()), 23000).slice(22000);
const mail = files.map(f=>fs.readFileSync(f));
function t(name, fn){ for(const m of mail.slice(0,100)) fn(m); const u0=process.cpuUsage(); for(const m of mail) fn(m); const u=process.cpuUsage(u0); console.log(name.padEnd(14), ((u.user+u.system)/mail.length).toFixed(1),'us'); }
for (let r=0;r<2;r++){
t('deriveRow', m=>deriveRow(m));
t('parseMessage', m=>parseMessage(m));
t('imapMetaOf', m=>imapMetaOf(m));
t('encodeRaw', m=>encodeRaw(m));
t('sha256', m=>crypto.createHash('sha256').update(m).digest());
const rows=mail.map(m=>deriveRow(m).row);
let i=0; t('headerJson', m=>headerJson(rows[(i++)%rows.length]));
i=0; t('knex insert', m=>{const r={...rows[(i++)%rows.length]}; delete r.imap; r.header_json=headerJson(r); return knex('messages').insert([r]).toSQL();});
}
