#!/usr/bin/env bash
# Issue 30.6 lever 2: what a higher fillfactor on `messages` costs a flag STORE.
# Copies of the Enron quarter's messages_u1 (bench:disk --only quarter --keep, then
# `mailgate db start` on that MAILGATE_HOME) at fillfactor F with the partition's 9 indexes,
# then the store's flag write (mail-ops: flags and modseq of a set of uids) on 20% of the rows,
# then on another 20%, then 100%, each timed by psql, with the HOT share of the updates.
# Usage: PSQL="psql -h 127.0.0.1 -p PORT -U mailgate -d mailgate" bash messages-fillfactor-2026-11-28.sh
set -euo pipefail
: "${PSQL:?psql command line}"
run() { $PSQL -X -q -v ON_ERROR_STOP=1 "$@"; }
for round in 1 2 3; do
  for ff in 50 70 90 100; do
    t="ff_${ff}"
    run -c "DROP TABLE IF EXISTS $t" \
      -c "CREATE TABLE $t (LIKE messages_u1 INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION) WITH (fillfactor = $ff, toast_tuple_target = 512, autovacuum_enabled = false)" \
      -c "INSERT INTO $t SELECT * FROM messages_u1 ORDER BY mailbox_id, uid" \
      -c "ALTER TABLE $t ADD PRIMARY KEY (user_id, mailbox_id, uid)" \
      -c "CREATE INDEX ON $t USING gin (cc_text gin_trgm_ops)" \
      -c "CREATE INDEX ON $t USING gin (from_text gin_trgm_ops)" \
      -c "CREATE INDEX ON $t USING gin (subject gin_trgm_ops)" \
      -c "CREATE INDEX ON $t USING gin (to_text gin_trgm_ops)" \
      -c "CREATE INDEX ON $t (user_id, mailbox_id, COALESCE(date, internal_date), uid)" \
      -c "CREATE UNIQUE INDEX ON $t (user_id, mailbox_id, content_hash, dup_index)" \
      -c "CREATE INDEX ON $t (user_id, mailbox_id, date)" \
      -c "CREATE INDEX ON $t (user_id, message_id)" \
      -c "VACUUM ANALYZE $t" -c "CHECKPOINT"
    heap=$(run -At -c "SELECT pg_relation_size('$t')")
    out=$(run -At -c '\timing on' \
      -c "UPDATE $t SET flags = array_append(flags, '\\Seen'), modseq = modseq + 1 WHERE uid % 5 = 0" \
      -c "UPDATE $t SET flags = array_append(flags, '\\Flagged'), modseq = modseq + 1 WHERE uid % 5 = 1" \
      -c "UPDATE $t SET flags = array_append(flags, '\\Deleted'), modseq = modseq + 1" 2>&1 | grep -o 'Time: [0-9.]* ms' | awk '{print $2}' | paste -sd' ')
    sleep 1
    hot=$(run -At -c "SELECT n_tup_hot_upd || '/' || n_tup_upd FROM pg_stat_user_tables WHERE relname = '$t'")
    echo "round=$round fillfactor=$ff heapBytes=$heap storeMs(20%,20%,100%)=$out hot/updates=$hot"
    run -c "DROP TABLE $t"
  done
done
