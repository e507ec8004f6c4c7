# usage: split.sh WT N OFFSET label  -> per-process CPU of serve and each PostgreSQL process over N corpus deliveries, plus perf
WT=$(cd "$1" && pwd); N=$2; OFF=$3; L=$4
PGP=$(head -1 prof/deliver-pg/pgdata/postmaster.pid)
cd $WT && (MAILGATE_HOME=/tmp/dlv-deliver/prof/deliver-pg LOG_LEVEL=warn LMTP_PORT=24311 LMTP_HOST=127.0.0.1 IMAP_PORT=24312 IMAP_HOST=127.0.0.1 PORT=24313 HOST=127.0.0.1 nohup node --perf-basic-prof packages/cli/bin/mailgate.js serve > /tmp/dlv-deliver/serve-split.log 2>&1 & echo $! > /tmp/dlv-deliver/serve-split.pid)
cd /tmp/dlv-deliver
for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24311) 2>/dev/null && break; done
S=$(cat serve-split.pid)
node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) 40 $((OFF)) $S,$PGP > /dev/null
snap(){ for p in $S $PGP $(pgrep -P $PGP); do [ -r /proc/$p/stat ] && awk -v p=$p '{c=$0; sub(/.*\(/,"",c); sub(/\).*/,"",c); s=$0; sub(/.*\) /,"",s); split(s,a," "); printf "%s %s %s\n", p, c, a[12]+a[13]}' /proc/$p/stat; done; }
snap > split-$L.before
PIDS=$(echo $S $PGP $(pgrep -P $PGP) | tr ' ' ',')
if [ -n "$PERF" ]; then perf record -F 499 -g -p $PIDS -o /tmp/dlv-deliver/perf-$L.data > /dev/null 2>&1 & PP=$!; fi
sleep 0.5
echo "$L $(node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) $N $((OFF+40)) $S,$PGP)"
snap > split-$L.after; ps -o pid,args -p $(pgrep -P $PGP | tr "\n" "," | sed "s/,$//") > split-$L.ps-end 2>/dev/null
if [ -n "$PERF" ]; then kill -INT $PP; wait $PP; fi
kill $S; while kill -0 $S 2>/dev/null; do sleep 0.3; done
ps -o pid,args -p $(pgrep -P $PGP | tr '\n' ',' | sed 's/,$//') > split-$L.ps 2>/dev/null
# a process that started during the run (not in .before) counts whole
join -a 2 -e 0 -o 0,2.2,1.3,2.3 <(sort split-$L.before) <(sort split-$L.after) | awk -v n=$N '{d=($4-$3)*10/n; if (d>0) printf "%-8s %-20s %.2f ms/msg\n", $1, $2, d}'
