#!/bin/bash
# Import floor (issue 13 item 4; docs/benchmarks.md "Import speed"): the same importer on the
# whole Enron set into a fresh embedded database, as shipped ("all") or with no search feature
# in the database ("nosearch": the tsvector trigger and the seven GIN indexes dropped after the
# schema is created). A diagnostic experiment, not product code: the psql statements are the
# point. Needs the corpus unpacked in /tmp/mailgate-corpus (test/support/corpus.js does it).
# Run under the exclusive CPU lock; the figures are in bench/results/import-floor-2026-11-25.json.
set -e
cd "$(dirname "$0")/../../.."
export MAILGATE_HOME=/tmp/floor-home LOG_LEVEL=error
npx mailgate db stop >/dev/null 2>&1 || true
rm -rf /tmp/floor-home /tmp/one && mkdir -p /tmp/one/x
cp "$(find /tmp/mailgate-corpus/enron/maildir -type f | sort | head -1)" /tmp/one/x/1
npx mailgate db start >/dev/null
npx mailgate import mh /tmp/one --user warm --json --quiet >/dev/null
PORT=$(node -e "console.log(require('/tmp/floor-home/pg.json').port)")
export PGPASSWORD=$(node -e "console.log(require('/tmp/floor-home/pg.json').password)")
PSQL="psql -q -h 127.0.0.1 -p $PORT -U mailgate mailgate"
if [ "$1" = nosearch ]; then
  $PSQL -c "DROP TRIGGER messages_tsv ON messages" \
    -c "DROP INDEX messages_body_text_trgm, messages_cc_text_trgm, messages_from_text_trgm, messages_header_text_trgm, messages_subject_trgm, messages_to_text_trgm, messages_tsv_idx"
fi
PGPID=$(npx mailgate db status --json | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).pid))")
cpu() { awk '{print $14+$15+$16+$17}' /proc/$PGPID/stat; }
c0=$(cpu); l0=0; for c in $(pgrep -P $PGPID); do l0=$((l0 + $(awk '{print $14+$15}' /proc/$c/stat))); done
/usr/bin/time -f "import process: user %U s, sys %S s, wall %e s, maxrss %M KB" \
  node packages/cli/bin/mailgate.js import mh /tmp/mailgate-corpus/enron/maildir --user full --json --quiet 2>/tmp/floor-time.txt | tail -1 | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log('messages',r.messages,'seconds',r.seconds,'rate',r.rate,'peakRssMB',r.peakRssMB,'quarantined',r.quarantined,'ginMergeMs',r.stages.ginMergeMs,'cpuMs',r.stages.cpuMs)})"
c1=$(cpu); l1=0; for c in $(pgrep -P $PGPID); do l1=$((l1 + $(awk '{print $14+$15}' /proc/$c/stat))); done
echo "postgres CPU (approx, ticks/100): $(( (c1 - c0 + l1 - l0) ))0 ms"
cat /tmp/floor-time.txt | tail -1
$PSQL -c "select count(*) from messages where user_id=(select id from users where name='full')" 2>/dev/null || true
npx mailgate db stop >/dev/null
