# usage: HOME_PG=DIR RCPT=ADDR deliver-ab-2026-11-28.sh OFFSET WARM N TREE...
# Interleaved A/B of CPU per LMTP delivery: for each TREE in turn, a fresh `mailgate serve` of that
# tree on the bench's MAILGATE_HOME (HOME_PG: a bench:deliver --work's deliver-pg, whose user's
# INBOX holds the 20,000 messages; RCPT that user's address), WARM untimed corpus deliveries, then
# N timed ones by the bench's LMTP client (-drive.js of this folder); prints the serve process's
# CPU (node) and serve + PostgreSQL's (cpu) per delivery. Each run takes the next corpus messages.
OFF=$1; WARM=$2; N=$3; shift 3
H=${HOME_PG:-/tmp/deliver-work/prof/deliver-pg}; RCPT=${RCPT:-$(cat $(dirname $H)/../rcpt)}
DRIVE=$(cd "$(dirname "$0")" && pwd)/deliver-cpu-2026-11-28-drive.js; HERE=$(cd "$(dirname "$0")/../../.." && pwd)
k=0
for WT in "$@"; do
  (cd $WT; if (echo > /dev/tcp/127.0.0.1/24411) 2>/dev/null; then echo 'port 24411 busy' >&2; exit 1; fi; MAILGATE_HOME=$H LOG_LEVEL=warn LMTP_PORT=24411 LMTP_HOST=127.0.0.1 IMAP_PORT=24412 IMAP_HOST=127.0.0.1 PORT=24413 HOST=127.0.0.1 nohup node packages/cli/bin/mailgate.js serve > /tmp/deliver-ab-serve.log 2>&1 & echo $! > /tmp/deliver-ab-serve.pid) || exit 1
  for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24411) 2>/dev/null && break; done
  S=$(cat /tmp/deliver-ab-serve.pid); [ "$(readlink /proc/$S/exe)" != "" ] && ss -ltnp | grep -q "pid=$S," || { echo "serve $S not listening" >&2; exit 1; }; PGP=$(head -1 $H/pgdata/postmaster.pid)
  O=$((OFF + k*(WARM+N))); k=$((k+1))
  node $DRIVE $HERE 24411 $RCPT $WARM $O $S,$PGP > /dev/null
  echo "$(git -C $WT rev-parse --short HEAD)$( [ -n "$(git -C $WT status --porcelain packages)" ] && echo +wip) $WT load=$(cut -d' ' -f1 /proc/loadavg) $(node $DRIVE $HERE 24411 $RCPT $N $((O+WARM)) $S,$PGP)"
  kill $S; while kill -0 $S 2>/dev/null; do sleep 0.3; done
done
