#!/bin/bash
# Where a first FETCH's wall time goes, leg by leg (issue 35): the IMAP server of the tree TREE
# (first-fetch-timeline-2026-11-28-child.js) on the bench's database, driven by
# first-fetch-timeline-2026-11-28.js; prints the report and the server's CPU per thread.
#   MAILGATE_HOME=/tmp/fetch-work/pg-home FETCH_USER=… FETCH_PASSWORD=… \
#     bash packages/bench/experiments/first-fetch-timeline-2026-11-28.sh TREE FIRST_UID [SCRATCH_DIR]
set -e
TREE=$(cd "$1" && pwd); FIRST=${2:-7001}; W=${3:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
export TREE LOG_LEVEL=silent TL_OUT=$W/server.json
(cd "$TREE" && exec node "$HERE/first-fetch-timeline-2026-11-28-child.js" > "$W/child.out" 2>&1) &
for i in $(seq 100); do sleep 0.2; grep -q '^{"port' "$W/child.out" && break; done
field() { node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n").find((x)=>x.startsWith("{\"port"));console.log(JSON.parse(l)[process.argv[2]])' "$W/child.out" "$1"; }
PORT=$(field port); PID=$(field pid)
threads() { for t in /proc/$PID/task/*; do echo "$(basename "$t") $(awk '{print $14+$15}' "$t/stat")"; done; }
threads > "$W/th0"
nice node "$HERE/first-fetch-timeline-2026-11-28.js" drive "$PORT" "$FIRST" "$W/client.json"
threads > "$W/th1"
kill -USR2 "$PID"; sleep 0.5; kill -TERM "$PID"; sleep 1
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) tree $(git -C "$TREE" log --oneline -1 | cut -c1-60)"
echo "# server CPU per thread over the drive (ms, 10 ms ticks; the first is the main thread):"
join "$W/th0" "$W/th1" | awk '{printf "#   thread %s %d ms\n", $1, ($3-$2)*10}'
node "$HERE/first-fetch-timeline-2026-11-28.js" report "$W/server.json" "$W/client.json"
