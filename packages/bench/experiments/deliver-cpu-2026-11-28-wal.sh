# usage: walab.sh WT OFFSET -> alternating batches of 300 corpus deliveries with wal_compression pglz / off on one serve process
WT=$(cd "$1" && pwd); OFF=$2
export PGPASSWORD=$(node -e "console.log(require('/tmp/dlv-deliver/prof/deliver-pg/pg.json').password)")
PORT=$(node -e "console.log(require('/tmp/dlv-deliver/prof/deliver-pg/pg.json').port)")
P="psql -h 127.0.0.1 -p $PORT -U mailgate -d mailgate -X -Atq"
PGP=$(head -1 prof/deliver-pg/pgdata/postmaster.pid)
cd $WT && (MAILGATE_HOME=/tmp/dlv-deliver/prof/deliver-pg LOG_LEVEL=warn LMTP_PORT=24311 LMTP_HOST=127.0.0.1 IMAP_PORT=24312 IMAP_HOST=127.0.0.1 PORT=24313 HOST=127.0.0.1 nohup node packages/cli/bin/mailgate.js serve > /tmp/dlv-deliver/serve-wal.log 2>&1 & echo $! > /tmp/dlv-deliver/serve-wal.pid)
cd /tmp/dlv-deliver
for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24311) 2>/dev/null && break; done
S=$(cat serve-wal.pid)
node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) 600 $OFF $S,$PGP > /dev/null   # warm-up
b=0
for mode in pglz off off pglz pglz off off pglz; do
  $P -c "ALTER SYSTEM SET wal_compression = '$mode'" -c "SELECT pg_reload_conf()" > /dev/null; sleep 1
  w0=$($P -c "SELECT wal_fpi || ' ' || wal_bytes FROM pg_stat_wal")
  r=$(node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) 300 $((OFF+600+300*b)) $S,$PGP)
  w1=$($P -c "SELECT wal_fpi || ' ' || wal_bytes FROM pg_stat_wal")
  echo "wal_compression=$mode $r fpi/msg $(echo $w0 $w1 | awk '{printf "%.2f wal_bytes/msg %d", ($3-$1)/300, ($4-$2)/300}')"
  b=$((b+1))
done
$P -c "ALTER SYSTEM RESET wal_compression" -c "SELECT pg_reload_conf()" > /dev/null
kill $S; while kill -0 $S 2>/dev/null; do sleep 0.3; done
