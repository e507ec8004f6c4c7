#!/bin/bash
# Cold EXPLAIN (ANALYZE, BUFFERS) of the store's text search statement, PostgreSQL restarted and
# the page cache dropped before each sample; effective_io_concurrency varied.
# usage: cold-explain-2026-11-28.sh MAILGATE_HOME OUTFILE (the newest bimap-large-* user of that home)
set -u
HOME_DIR=$1; OUT=$2
cd "$(dirname "$0")/../../.."
PW=$(node -e "console.log(require('$HOME_DIR/pg.json').password)")
PORT=$(node -e "console.log(require('$HOME_DIR/pg.json').port)")
: > $OUT
MAILGATE_HOME=$HOME_DIR npx mailgate db start >/dev/null 2>&1
PORT=$(node -e "console.log(require('$HOME_DIR/pg.json').port)")
U=$(PGPASSWORD=$PW psql -h 127.0.0.1 -p $PORT -U mailgate mailgate -Atc "select max(id) from users where name like 'bimap-large-%'")
echo "user $U" >> $OUT
for rep in 1 2; do
 for word in depending would; do
  for eic in 1 64; do
    MAILGATE_HOME=$HOME_DIR npx mailgate db stop >/dev/null 2>&1
    sync; echo 3 > /proc/sys/vm/drop_caches
    MAILGATE_HOME=$HOME_DIR npx mailgate db start >/dev/null 2>&1
    PORT=$(node -e "console.log(require('$HOME_DIR/pg.json').port)")
    echo "=== rep=$rep word=$word effective_io_concurrency=$eic" >> $OUT
    PGPASSWORD=$PW psql -h 127.0.0.1 -p $PORT -U mailgate mailgate >> $OUT 2>&1 <<SQL
SET track_io_timing = on;
SET effective_io_concurrency = $eic;
\timing on
EXPLAIN (ANALYZE, BUFFERS, SETTINGS) SELECT b.id AS mb_id, x.* FROM mailboxes b LEFT JOIN LATERAL (SELECT m.uid FROM messages m WHERE m.user_id = $U AND m.mailbox_id = b.id AND NOT m.expunged AND (m.uid = ANY(ARRAY(SELECT c.uid FROM message_chunks c WHERE c.user_id = $U AND c.mailbox_id = b.id AND c.t LIKE '%$word%'))) AND b.expunged_pending > 0 UNION ALL SELECT a.uid FROM (SELECT DISTINCT c.uid FROM message_chunks c WHERE c.user_id = $U AND c.mailbox_id = b.id AND c.t LIKE '%$word%') a WHERE b.expunged_pending = 0 ORDER BY uid) x ON true WHERE b.user_id = $U AND b.name = 'INBOX';
SQL
  done
 done
done
MAILGATE_HOME=$HOME_DIR npx mailgate db stop >/dev/null 2>&1
