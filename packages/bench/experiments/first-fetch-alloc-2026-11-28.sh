#!/bin/bash
# JS-heap allocation per first FETCH (issue 35): the IMAP server of the tree TREE
# (first-fetch-alloc-2026-11-28-child.js) on the bench's database; 3,000 first fetches to warm
# up, then 3,000 first fetches of other messages sampled (first-fetch-timeline-2026-11-28.js
# drive's client, first fetches only).
#   MAILGATE_HOME=/tmp/fetch-work/pg-home FETCH_USER=… FETCH_PASSWORD=… \
#     bash packages/bench/experiments/first-fetch-alloc-2026-11-28.sh TREE [SCRATCH_DIR]
set -e
TREE=$(cd "$1" && pwd); W=${2:-$(mktemp -d)}
HERE=$(cd "$(dirname "$0")" && pwd)
export TREE LOG_LEVEL=silent PER=3000
(cd "$TREE" && exec node "$HERE/first-fetch-alloc-2026-11-28-child.js" > "$W/child.out" 2>&1) &
for i in $(seq 100); do sleep 0.2; grep -q '^{"port' "$W/child.out" && break; done
field() { node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n").find((x)=>x.startsWith("{\"port"));console.log(JSON.parse(l)[process.argv[2]])' "$W/child.out" "$1"; }
PORT=$(field port); PID=$(field pid)
# Warm-up: 3,000 first fetches (uids 2, 6, 10, …); sampled: 3,000 first fetches of others (3, 7, …).
PHASES=first node "$HERE/first-fetch-timeline-2026-11-28.js" drive "$PORT" 2 "$W/warm.json"
kill -USR1 "$PID"; sleep 0.3
PHASES=first nice node "$HERE/first-fetch-timeline-2026-11-28.js" drive "$PORT" 3 "$W/client.json"
kill -USR2 "$PID"; sleep 2; kill -TERM "$PID"; sleep 1
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) tree $(git -C "$TREE" log --oneline -1 | cut -c1-60)"
grep -v '^{"port' "$W/child.out"
