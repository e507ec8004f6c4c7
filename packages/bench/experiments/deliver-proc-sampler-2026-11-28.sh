# logs every 3 s: per-process CPU ticks of the postgres processes of the bench home and of serve
H=/tmp/deliver-work/prof/deliver-pg
while [ -f /tmp/deliver-work/sampling ]; do
  PGP=$(head -1 $H/pgdata/postmaster.pid 2>/dev/null)
  if [ -n "$PGP" ]; then
    for p in $PGP $(pgrep -P $PGP) $(pgrep -f "mailgate.js serve"); do
      [ -r /proc/$p/stat ] && echo "$(date +%s) $p $(awk '{s=$0; sub(/.*\) /,"",s); split(s,a," "); print a[12]+a[13]}' /proc/$p/stat) $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-60)"
    done
  fi
  sleep 3
done
