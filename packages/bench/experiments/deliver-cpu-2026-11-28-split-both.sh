# usage: split-both.sh WT N OFFSET label -> on one serve process, alternately N corpus messages by LMTP and N by IMAP APPEND (after 100 of each as warm-up): per-process CPU of each
WT=$(cd "$1" && pwd); N=$2; OFF=$3; L=$4
U=$(sed 's/@.*//' /tmp/dlv-deliver/rcpt)
PGP=$(head -1 prof/deliver-pg/pgdata/postmaster.pid)
cd $WT && (MAILGATE_HOME=/tmp/dlv-deliver/prof/deliver-pg LOG_LEVEL=warn LMTP_PORT=24311 LMTP_HOST=127.0.0.1 IMAP_PORT=24312 IMAP_HOST=127.0.0.1 PORT=24313 HOST=127.0.0.1 nohup node packages/cli/bin/mailgate.js serve > /tmp/dlv-deliver/serve-both.log 2>&1 & echo $! > /tmp/dlv-deliver/serve-both.pid)
cd /tmp/dlv-deliver
for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24312) 2>/dev/null && break; done
S=$(cat serve-both.pid)
node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) 100 $OFF $S,$PGP > /dev/null
node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive-append.js $WT 24312 $U bench-pass-1 100 $((OFF+100)) $S,$PGP > /dev/null
snap(){ for p in $S $PGP $(pgrep -P $PGP); do [ -r /proc/$p/stat ] && awk -v p=$p '{c=$0; sub(/.*\(/,"",c); sub(/\).*/,"",c); s=$0; sub(/.*\) /,"",s); split(s,a," "); printf "%s %s %s\n", p, c, a[12]+a[13]}' /proc/$p/stat; done; }
o=$((OFF+200))
for k in 1 2; do
  for door in lmtp append; do
    snap > sb.before
    if [ $door = lmtp ]; then r=$(node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive.js $WT 24311 $(cat rcpt) $N $o $S,$PGP); else r=$(node $WT/packages/bench/experiments/deliver-cpu-2026-11-28-drive-append.js $WT 24312 $U bench-pass-1 $N $o $S,$PGP); fi
    snap > sb.after
    echo "$L $door$k $r"
    join -a 2 -e 0 -o 0,2.2,1.3,2.3 <(sort sb.before) <(sort sb.after) | awk -v n=$N '{d=($4-$3)*10/n; if (d>0) printf "   %-8s %-10s %.2f ms/msg\n", $1, $2, d}'
    o=$((o+N))
  done
done
kill $S; while kill -0 $S 2>/dev/null; do sleep 0.3; done
