#!/bin/bash
# What the pieces' layout costs a TEXT search (issue 35): the large mailbox's pieces as stored
# (compressed in place, pglz) against an uncompressed copy of the same pieces (STORAGE PLAIN,
# its own trigram index), warm (interleaved, medians of 15) and cold (PostgreSQL stopped, this
# database's files evicted from the page cache, PostgreSQL started); and, cold, the stored
# pieces read after one sequential read of their heap file (cat), to show what the bitmap heap
# scan's one-page reads cost against reading the same file in order, and the same after an
# in-order read by PostgreSQL itself (a plain seq scan counting the pieces, no text read).
# usage: text-layouts-2026-11-28.sh MAILGATE_HOME OUTFILE   (the newest bimap-large-* user)
set -u
HOME_DIR=$1; OUT=$2
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
P=message_chunks_u$U
if [ "$(q -Atc "select count(*) from pg_class where relname = 'tc_plain_u$U'")" = 0 ]; then
  # t || '' decompresses: a compressed datum would otherwise be copied as it is.
  q -q -c "CREATE TABLE tc_plain_u$U (uid bigint, t text STORAGE PLAIN)" \
    -c "INSERT INTO tc_plain_u$U SELECT uid, t || '' FROM $P ORDER BY mailbox_id, uid, kind, seq" \
    -c "CREATE INDEX ON tc_plain_u$U USING gin (t gin_trgm_ops)" -c "VACUUM ANALYZE tc_plain_u$U"
fi
{
  echo "user $U; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
  q -c "select c.relname, pg_relation_size(c.oid) / 8192 heap_pages, pg_size_pretty(pg_relation_size(c.oid)) heap, pg_size_pretty(pg_indexes_size(c.oid)) indexes from pg_class c where relname in ('$P', 'tc_plain_u$U')"
  echo "--- warm, interleaved, median of 15 (node-postgres, one connection)"
  PGPASSWORD=$PGPASSWORD node -e "
    const { Client } = require('pg');
    (async () => {
      const c = new Client({ host: '127.0.0.1', port: $PORT, user: 'mailgate', database: 'mailgate' });
      await c.connect();
      for (const w of ['depending', 'would']) {
        const t = { '$P': [], 'tc_plain_u$U': [] }, n = {};
        for (let i = 0; i < 15; i++) for (const tb of Object.keys(t)) {
          const t0 = process.hrtime.bigint();
          const r = await c.query('SELECT count(DISTINCT uid) FROM ' + tb + \" WHERE t LIKE '%\" + w + \"%'\");
          t[tb].push(Number(process.hrtime.bigint() - t0) / 1e6);
          n[tb] = r.rows[0].count;
        }
        const med = (xs) => xs.sort((a, b) => a - b)[7].toFixed(2);
        const seq = [];
        for (let i = 0; i < 15; i++) {
          await c.query('SET enable_indexonlyscan = off; SET enable_bitmapscan = off; SET max_parallel_workers_per_gather = 0');
          const t0 = process.hrtime.bigint();
          await c.query('SELECT count(*) FROM $P');
          seq.push(Number(process.hrtime.bigint() - t0) / 1e6);
          await c.query('RESET enable_indexonlyscan; RESET enable_bitmapscan; RESET max_parallel_workers_per_gather');
        }
        if (w === 'would') console.log('the in-order read of the stored pieces (seq scan, count) when cached:', med(seq), 'ms');
        console.log(w, Object.keys(t).map((tb) => tb + ' ' + med(t[tb]) + ' ms (' + n[tb] + ' messages)').join(', '));
      }
      await c.end();
    })().catch((e) => { console.error(e); process.exit(1); });"
  echo "--- cold: EXPLAIN (ANALYZE, BUFFERS) after a restart and eviction; 'cat first': the heap file read in order (cat) before the statement, its time apart"
  F=$HOME_DIR/pgdata/$(q -Atc "select pg_relation_filepath('$P')")
  for rep in $(seq 1 "${REPS:-2}"); do
    for w in depending would; do
      for v in stored plain "cat first" "seqscan first"; do
        stop; evict; start
        tb=$P; [ "$v" = plain ] && tb=tc_plain_u$U
        pre=""
        if [ "$v" = "cat first" ]; then
          t0=$(date +%s%N); cat "$F"* > /dev/null; t1=$(date +%s%N)
          pre="cat $(( (t1 - t0) / 1000 )) us;"
        fi
        if [ "$v" = "seqscan first" ]; then
          pre="seqscan $(q -c 'SET enable_indexonlyscan = off' -c 'SET enable_bitmapscan = off' -c 'SET max_parallel_workers_per_gather = 0' \
            -c "EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM $P" | grep -E 'Execution Time' | tr -s ' ');"
        fi
        echo "rep $rep, $w, $v: $pre $(q -c 'SET track_io_timing = on' -c "EXPLAIN (ANALYZE, BUFFERS) SELECT DISTINCT uid FROM $tb WHERE t LIKE '%$w%'" |
          grep -E 'Heap Blocks|I/O Timings|Planning Time|Execution Time' | tr -s ' ' | tr '\n' ';')"
      done
    done
  done
} > "$OUT" 2>&1
stop
