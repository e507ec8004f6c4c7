#!/bin/bash
# Where a TEXT search's time goes in PostgreSQL (issue 35): for `depending` (~1%) and `would`
# (~25%) on the bench's large mailbox, (1) what the trigram index hands the recheck (candidate
# pieces, hits, how many compressed, their bytes), (2) a warm CPU profile of the backend running
# the store's statement 150 times (perf), (3) EXPLAIN (ANALYZE, BUFFERS) cold: PostgreSQL
# stopped, this database's files evicted from the page cache (posix_fadvise DONTNEED, so the
# rest of the machine keeps its cache), PostgreSQL started.
# usage: text-profile-2026-11-28.sh MAILGATE_HOME OUTDIR   (the newest bimap-large-* user)
set -u
HOME_DIR=$1; OUT=$2
mkdir -p "$OUT"
cd "$(dirname "$0")/../../.."
export PGPASSWORD=$(node -e "console.log(require('$HOME_DIR/pg.json').password)")
start() { MAILGATE_HOME=$HOME_DIR npx mailgate db start >/dev/null 2>&1; PORT=$(node -e "console.log(require('$HOME_DIR/pg.json').port)"); }
stop() { MAILGATE_HOME=$HOME_DIR npx mailgate db stop >/dev/null 2>&1; }
q() { psql -h 127.0.0.1 -p $PORT -U mailgate mailgate "$@"; }
evict() {
  python3 - "$HOME_DIR/pgdata" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            fd = os.open(os.path.join(root, f), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
        except OSError:
            pass
PY
}
start
U=$(q -Atc "select max(id) from users where name like 'bimap-large-%'")
B=$(q -Atc "select id from mailboxes where user_id = $U and name = 'INBOX'")
stmt() { echo "SELECT DISTINCT c.uid FROM message_chunks c WHERE c.user_id = $U AND c.mailbox_id = $B AND c.t LIKE '%$1%'"; }
{
  echo "user $U mailbox $B; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
  q -c "select count(*) pieces, count(*) filter (where pg_column_size(t) < octet_length(t)) compressed, pg_size_pretty(sum(octet_length(t))) text_bytes, pg_relation_size('message_chunks_u$U')/8192 heap_pages from message_chunks_u$U"
  for w in depending would; do
    echo "--- $w: candidates of the trigram index (all its trigrams), hits, messages"
    # The pattern's own trigrams, each as a substring: the pieces the index hands the recheck.
    all=$(for ((i = 0; i + 3 <= ${#w}; i++)); do printf "t LIKE '%%%s%%' AND " "${w:i:3}"; done)
    q -c "select count(*) candidates, count(*) filter (where t like '%$w%') hit_pieces, count(distinct uid) filter (where t like '%$w%') hit_messages, count(*) filter (where pg_column_size(t) < octet_length(t)) compressed, round(avg(octet_length(t))) avg_bytes from message_chunks_u$U where $all true"
  done
} > "$OUT/stats.txt" 2>&1
for w in depending would; do
  # The statement 150 times in a script (psql 15's \watch has no count).
  { printf 'select pg_backend_pid();\nselect pg_sleep(1.5);\n'; for i in $(seq 150); do echo "$(stmt $w);"; done; } > "$OUT/loop-$w.sql"
  q -At -f "$OUT/loop-$w.sql" > "$OUT/pid-$w.txt" 2>/dev/null &
  QP=$!
  sleep 0.7
  P=$(head -1 "$OUT/pid-$w.txt")
  perf record -F 4000 -g -p "$P" -o "$OUT/perf-$w.data" 2>/dev/null &
  PERF=$!
  wait $QP
  kill -INT $PERF; wait $PERF
  perf report -i "$OUT/perf-$w.data" --no-children --sort symbol --stdio 2>/dev/null |
    grep -E '^ +[0-9.]+%' | head -30 > "$OUT/warm-profile-$w.txt"
  rm -f "$OUT/perf-$w.data" "$OUT/pid-$w.txt" "$OUT/loop-$w.sql"
  q -c "EXPLAIN (ANALYZE, BUFFERS) $(stmt $w)" -c "EXPLAIN (ANALYZE, BUFFERS) $(stmt $w)" >> "$OUT/warm-explain.txt" 2>&1
done
: > "$OUT/cold-explain.txt"
for rep in $(seq 1 "${REPS:-3}"); do
  for w in depending would; do
    stop; evict; start
    echo "=== rep=$rep word=$w" >> "$OUT/cold-explain.txt"
    q -c "SET track_io_timing = on" -c '\timing on' -c "EXPLAIN (ANALYZE, BUFFERS) $(stmt $w)" >> "$OUT/cold-explain.txt" 2>&1
  done
done
stop
