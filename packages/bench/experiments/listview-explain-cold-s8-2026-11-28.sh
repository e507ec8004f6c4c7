#!/usr/bin/env bash
# Cold EXPLAIN (ANALYZE, SERIALIZE, BUFFERS) of the packed list-view read on the bench's box:
# PostgreSQL stopped and started, page cache dropped, a new psql connection per round.
#   bash listview-explain-cold-s8.sh TREE HOME USER_ID MAILBOX_ID PASSWORD ROUNDS
set -euo pipefail
tree=$1 home=$2 uid=$3 mb=$4 pw=$5 rounds=$6
q="SELECT i.uid / 512 AS k, count(*) AS n, string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids,
  string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes,
  string_agg(octet_length(i.fields)::text, ',' ORDER BY i.uid) AS lens,
  string_agg(i.fields, '' ORDER BY i.uid) AS text
  FROM message_imap_lines i WHERE i.user_id = $uid AND i.mailbox_id = $mb AND i.uid BETWEEN 1 AND 21282 GROUP BY 1"
for r in $(seq "$rounds"); do
  (cd "$tree" && MAILGATE_HOME=$home npx mailgate db stop >/dev/null 2>&1 || true)
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd "$tree" && MAILGATE_HOME=$home npx mailgate db start >/dev/null 2>&1)
  port=$(node -e "console.log(require('$home/pg.json').port)")
  PGPASSWORD=$pw psql -h 127.0.0.1 -p "$port" -U mailgate -d mailgate -X -At -c \
    "EXPLAIN (ANALYZE, SERIALIZE, BUFFERS, COSTS OFF) $q" |
    grep -E "Aggregate|Sort  |Seq Scan|Planning Time|Execution Time|Serialization" | sed 's/^ *//' | paste -sd'|'
done
(cd "$tree" && MAILGATE_HOME=$home npx mailgate db stop >/dev/null 2>&1 || true)
