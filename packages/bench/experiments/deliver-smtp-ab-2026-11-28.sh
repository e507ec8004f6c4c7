# usage: deliver-smtp-ab-2026-11-28.sh RCPT TREE... (run from /tmp/deliver-work): per TREE a fresh serve on /tmp/deliver-work/prof/deliver-pg, 300 untimed then 600 timed smtp-source messages (1 session); CPU per message
D=$(cd "$(dirname "$0")" && pwd); H=/tmp/deliver-work/prof/deliver-pg; RCPT=$1; shift
for WT in "$@"; do
  cd $WT; MAILGATE_HOME=$H LOG_LEVEL=warn LMTP_PORT=24411 LMTP_HOST=127.0.0.1 IMAP_PORT=24412 IMAP_HOST=127.0.0.1 PORT=24413 HOST=127.0.0.1 nohup node packages/cli/bin/mailgate.js serve > /tmp/deliver-work/serve-ss.log 2>&1 &
  S=$!; cd /tmp/deliver-work
  for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/24411) 2>/dev/null && break; done
  PGP=$(head -1 $H/pgdata/postmaster.pid)
  node $D/deliver-smtp-ab-2026-11-28-drive.js 24411 $RCPT 300 $S,$PGP > /dev/null
  echo "$WT $(node $D/deliver-smtp-ab-2026-11-28-drive.js 24411 $RCPT 600 $S,$PGP)"
  kill $S; wait $S 2>/dev/null
done
