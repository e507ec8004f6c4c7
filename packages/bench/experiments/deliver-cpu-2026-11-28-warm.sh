# usage: warm.sh WT OFFSET label -> node and total CPU per delivery for 5 consecutive batches of 300 corpus messages on one serve process
WT=$(cd "$1" && pwd); OFF=$2; L=$3
PGP=$(head -1 prof/deliver-pg/pgdata/postmaster.pid)
cd $WT && (MAILGATE_HOME=/tmp/dlv-deliver/prof/deliver-pg LOG_LEVEL=warn LMTP_PORT=24311 LMTP_HOST=127.0.0.1 IMAP_PORT=24312 IMAP_HOST=127.0.0.1 PORT=24313 HOST=127.0.0.1 nohup node packages/cli/bin/mailgate.js serve > /tmp/dlv-deliver/serve-warm.log 2>&1 & echo $! > /tmp/dlv-deliver/serve-warm.pid)
cd /tmp/dlv-deliver
for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24311) 2>/dev/null && break; done
S=$(cat serve-warm.pid)
for b in 0 1 2 3 4; do echo "$L batch$b $(node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) 300 $((OFF+300*b)) $S,$PGP)"; done
kill $S; while kill -0 $S 2>/dev/null; do sleep 0.3; done
