#!/bin/bash
# Two IMAP servers, OLD_TREE's and NEW_TREE's bench lib/imap-child.js, on the one PostgreSQL of
# MAILGATE_HOME, and fetch-ab-2026-11-28.js between them: first fetches alternating per
# message, six chunks of 1,200 each, fresh uids per chunk; appended to OUT. As run for
# bench/results/imap-first-fetch-copies-2026-11-28/ab-first-fetch.txt (from a scratch copy with
# the two trees written in; committed with them as arguments).
#   MAILGATE_HOME=/tmp/fetch-work/pg-home FETCH_USER=… FETCH_PASSWORD=… flock -x /work/coord/cpu.lock \
#     bash packages/bench/experiments/fetch-ab-2026-11-28-pair.sh OLD_TREE NEW_TREE OUT
set -e
OLD=$(cd "$1" && pwd); NEW=$(cd "$2" && pwd); OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd); W=$(mktemp -d)
export LOG_LEVEL=silent
start() { (cd "$1" && exec node packages/bench/lib/imap-child.js > "$2" 2>&1) & for i in $(seq 100); do sleep 0.2; grep -q '^{"port' "$2" && break; done; }
get() { node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n").find((x)=>x.startsWith("{\"port"));console.log(JSON.parse(l)[process.argv[2]])' "$1" "$2"; }
start "$OLD" "$W/old.out"; start "$NEW" "$W/new.out"
PA=$(get "$W/old.out" port); IA=$(get "$W/old.out" pid); PB=$(get "$W/new.out" port); IB=$(get "$W/new.out" pid)
{
  echo "# A = old ($(git -C "$OLD" log --oneline -1 | cut -c1-60)), B = new ($(git -C "$NEW" log --oneline -1 | cut -c1-60))"
  echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for s in 1 2401 4801 7201 9601 12001; do nice node "$HERE/fetch-ab-2026-11-28.js" "$PA" "$IA" "$PB" "$IB" "$s" 1200; done
  echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$OUT"
kill -TERM "$IA" "$IB"; sleep 1; rm -rf "$W"
