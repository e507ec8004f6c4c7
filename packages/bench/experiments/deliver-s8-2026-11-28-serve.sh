# usage: deliver-s8-2026-11-28-serve.sh TREE PORTBASE [node flags...]: starts `mailgate serve` of TREE on MAILGATE_HOME=/tmp/deliver-h
# (DATABASE_URL from the environment when set), LMTP on PORTBASE, IMAP +1, HTTP +2; prints its pid once LMTP answers.
T=$1; P=$2; shift 2
cd $T && (MAILGATE_HOME=/tmp/deliver-h DATABASE_URL=$DATABASE_URL LOG_LEVEL=warn LMTP_PORT=$P LMTP_HOST=127.0.0.1 IMAP_PORT=$((P+1)) IMAP_HOST=127.0.0.1 PORT=$((P+2)) HOST=127.0.0.1 exec nohup node "$@" packages/cli/bin/mailgate.js serve > /tmp/deliver-x/serve-$P.log 2>&1) &
for i in $(seq 1 120); do sleep 0.5; (echo > /dev/tcp/127.0.0.1/$P) 2>/dev/null && break; done
ss -ltnp | grep "127.0.0.1:$P " | sed 's/.*pid=\([0-9]*\).*/\1/'
