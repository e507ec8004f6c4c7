#!/usr/bin/env bash
set -euo pipefail
# Cold EXPLAIN (ANALYZE, SERIALIZE, BUFFERS) of the packed read, one GROUP BY (g) against one
# aggregate per 512 uids (l), interleaved; PostgreSQL restarted and page cache dropped each time.
#   bash listview-explain-lateral-2026-11-28.sh TREE HOME USER_ID MAILBOX_ID PASSWORD ROUNDS
tree=$1 home=$2 uid=$3 mb=$4 pw=$5 rounds=$6
g="SELECT i.uid / 512 AS k, count(*) AS n, string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids, string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes, string_agg(octet_length(i.fields)::text, ',' ORDER BY i.uid) AS lens, string_agg(i.fields, '' ORDER BY i.uid) AS text FROM message_imap_lines i WHERE i.user_id = $uid AND i.mailbox_id = $mb AND i.uid BETWEEN 1 AND 21282 GROUP BY 1 ORDER BY 1"
l="SELECT g.k, x.* FROM generate_series(1::bigint / 512, 21282::bigint / 512) AS g(k) CROSS JOIN LATERAL (SELECT count(*) AS n, string_agg(i.uid::text, ',' ORDER BY i.uid) AS uids, string_agg(i.size::text, ',' ORDER BY i.uid) AS sizes, string_agg(octet_length(i.fields)::text, ',' ORDER BY i.uid) AS lens, string_agg(i.fields, '' ORDER BY i.uid) AS text FROM message_imap_lines i WHERE i.user_id = $uid AND i.mailbox_id = $mb AND i.uid BETWEEN greatest(1::bigint, g.k * 512) AND least(21282::bigint, g.k * 512 + 511)) x WHERE x.n > 0"
for r in $(seq "$rounds"); do
  for q in g l; do
  (cd "$tree" && MAILGATE_HOME=$home npx mailgate db stop >/dev/null 2>&1 || true)
  sync; echo 3 > /proc/sys/vm/drop_caches
  (cd "$tree" && MAILGATE_HOME=$home npx mailgate db start >/dev/null 2>&1)
  port=$(node -e "console.log(require('$home/pg.json').port)")
  if [ $q = g ]; then sql="$g"; else sql="$l"; fi
  PGPASSWORD=$pw psql -h 127.0.0.1 -p "$port" -U mailgate -d mailgate -X -At -c "EXPLAIN (ANALYZE, SERIALIZE, BUFFERS, COSTS OFF) $sql" | grep -E "^(GroupAggregate|Nested Loop)|Execution Time|Serialization|^ *Buffers" | head -3 | sed 's/^ *//' | paste -sd'|' | sed "s/^/$q /"
  done
done
(cd "$tree" && MAILGATE_HOME=$home npx mailgate db stop >/dev/null 2>&1 || true)
