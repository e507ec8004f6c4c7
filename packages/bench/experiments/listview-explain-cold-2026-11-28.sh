#!/usr/bin/env bash
# Cold EXPLAIN (ANALYZE, SERIALIZE, BUFFERS) of the packed list-view read, old layout against
# the new one (issue 35.3), interleaved: before each statement the embedded PostgreSQL of that
# home is stopped and started and the page cache dropped; a new psql connection runs it.
# The old home holds the layout before migration 20261203210100 (the lines in message_imap),
# the new one after it; each home's PostgreSQL listens on the port of its pg.json.
# Each home is started by its own tree (`db start` migrates: a newer tree would move the old
# home's lines).
#   bash listview-explain-cold-2026-11-28.sh OLD_TREE OLD_HOME NEW_TREE NEW_HOME USER_ID PASSWORD [ROUNDS]
set -euo pipefail
oldtree=$1 old=$2 newtree=$3 new=$4 uid=$5 pw=$6 rounds=${7:-3}
agg="count(*) AS n, string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids,
  string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes,
  string_agg(octet_length(i.fields)::text, ',' ORDER BY i.uid) AS lens,
  string_agg(i.fields, '' ORDER BY i.uid) AS text"
where="WHERE i.user_id = $uid AND i.mailbox_id = 1 AND i.uid BETWEEN 1 AND 30000 GROUP BY 1"
q_old="SELECT i.uid / 512 AS k, $agg FROM message_imap i $where"
q_new="SELECT i.uid / 512 AS k, $agg FROM message_imap_lines i $where"
portOf() { node -e "console.log(require('$1/pg.json').port)"; }
run() { # home query label tree
  (cd "$oldtree" && MAILGATE_HOME=$old npx mailgate db stop >/dev/null 2>&1 || true)
  (cd "$newtree" && MAILGATE_HOME=$new npx mailgate db stop >/dev/null 2>&1 || true)
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd "$4" && MAILGATE_HOME=$1 npx mailgate db start >/dev/null 2>&1)
  PGPASSWORD=$pw psql -h 127.0.0.1 -p "$(portOf "$1")" -U mailgate -d mailgate -X -At -c \
    "EXPLAIN (ANALYZE, SERIALIZE, BUFFERS, COSTS OFF) $2" |
    grep -E "Seq Scan|Index Scan|Execution Time|Serialization|^ *Buffers" | head -4 |
    sed 's/^ *//' | paste -sd'|' | sed "s/^/$3 /"
}
for r in $(seq "$rounds"); do
  run "$old" "$q_old" "old message_imap      " "$oldtree"
  run "$new" "$q_new" "new message_imap_lines" "$newtree"
done
(cd "$newtree" && MAILGATE_HOME=$new npx mailgate db stop >/dev/null 2>&1 || true)
