#!/bin/sh
# Interleaved A/B of PostgreSQL CPU per LMTP delivery: old = bec520d (trigram GIN), new = 01031b2 (vocabulary).
date -u +%T; uptime
for i in 1 2; do
  for v in old new; do
    if [ $v = old ]; then dir=/tmp/vocab-old; else dir=/tmp/vocab-base; fi
    cd $dir && TMPDIR=/tmp/vocab-tmp nice npm run bench:deliver -- --messages 5000 --deliveries 600 --sessions 1 --servers mailgate --no-append --warmup 100 --work /tmp/vocab-dl-$v --out /tmp/vocab-dl-out --name $v-$i 2>&1 | tail -2
  done
done
date -u +%T
