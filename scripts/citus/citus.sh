#!/usr/bin/env bash
# A real Citus cluster (one coordinator, two workers) on loopback ports, for tests, benchmarks and
# development: builds Citus 12.1.12 from ../shared/citus (AGPL, a separate server extension: built,
# never copied into this project) against Debian's PostgreSQL 15, once, into a cache folder outside
# the repository, installs it into PostgreSQL 15 and runs the three nodes from that cache.
#
#   bash scripts/citus/citus.sh build    # apt build deps, build once (cached), make install
#   bash scripts/citus/citus.sh start    # build if needed, initdb + start 3 nodes, print DATABASE_URL
#   bash scripts/citus/citus.sh url      # print DATABASE_URL of the coordinator
#   bash scripts/citus/citus.sh status   # say what runs; exit 0 when all nodes answer, 3 when not
#   bash scripts/citus/citus.sh stop     # stop the nodes (data kept)
#   bash scripts/citus/citus.sh add-node # start a third worker (port base+3), not yet added
#   bash scripts/citus/citus.sh create-db NAME [1|2|plain]  # a database of its own, print URL
#   bash scripts/citus/citus.sh drop-db NAME                # drop it on every node
#   bash scripts/citus/citus.sh destroy  # stop and delete the data directories
#
# Exit status 2 (with the reason printed) when the Citus source is absent: callers skip then.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CITUS_VERSION=12.1.12
CITUS_SRC="${CITUS_SRC:-$REPO/../shared/citus/citus-$CITUS_VERSION.tar.zst}"
CITUS_CACHE="${CITUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mailgate/citus-$CITUS_VERSION}"
CITUS_PORT="${CITUS_PORT:-9700}"
CITUS_DB="${CITUS_DB:-mailgate}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
PG_CONFIG="$PG_BIN/pg_config"
[ -x "$PG_CONFIG" ] || PG_CONFIG=/usr/bin/pg_config
DATA="${CITUS_DATA:-$CITUS_CACHE/cluster}"
BUILD_DEPS=(postgresql-15 postgresql-server-dev-15 libcurl4-openssl-dev liblz4-dev libzstd-dev
  libkrb5-dev libselinux1-dev libxslt1-dev libpam0g-dev autoconf flex bison zstd make gcc)

log() { echo "citus.sh: $*" >&2; }

# How to start this cluster, with the variables that point the script at it when they are not
# the defaults (a test's or a benchmark's own cluster).
start_hint() {
  local env=''
  [ "$DATA" != "$CITUS_CACHE/cluster" ] && env+="CITUS_DATA=$DATA "
  [ "$CITUS_PORT" != 9700 ] && env+="CITUS_PORT=$CITUS_PORT "
  echo "start it with: ${env}bash scripts/citus/citus.sh start"
}

# Commands that need the running cluster stop here with what is down (exit 3, as status).
require_running() {
  local n
  for n in "$@"; do
    running "$n" || {
      log "node$n (127.0.0.1:$(node_port "$n")) is not running; $(start_hint)"
      exit 3
    }
  done
}

SUDO=''
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO='sudo'; fi

# PostgreSQL refuses to run as root: as root the nodes run as the `postgres` system user (which
# Debian's postgresql-15 package creates); otherwise as the calling user.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

require_source() {
  if [ ! -f "$CITUS_SRC" ]; then
    echo "citus.sh: skipped: Citus source not present at $CITUS_SRC (see docs/scaling-out.md)"
    exit 2
  fi
}

install_deps() {
  local missing=()
  for p in "${BUILD_DEPS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing build dependencies: ${missing[*]}"
  $SUDO apt-get update -qq
  # policy-rc.d keeps Debian's postinst from starting the distribution's own cluster service.
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}"
}

# with_llvm=no: no LLVM bitcode for JIT inlining (PostgreSQL's own build has it; it doubles the
# compile time and Citus does not need it).
# The built tree is kept in the cache (stamp = source checksum) so a fresh clone or a CI run on
# the same machine only runs `make install` (seconds) instead of the several-minute build.
build() {
  require_source
  install_deps
  local sum stamp="$CITUS_CACHE/build.stamp" tree="$CITUS_CACHE/src/citus-$CITUS_VERSION"
  sum="$(sha256sum "$CITUS_SRC" | cut -d' ' -f1) $("$PG_CONFIG" --version)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
    log "building Citus $CITUS_VERSION into $CITUS_CACHE (several minutes)"
    rm -rf "$CITUS_CACHE/src"
    mkdir -p "$CITUS_CACHE/src"
    zstd -dc "$CITUS_SRC" | tar -x -C "$CITUS_CACHE/src"
    (cd "$tree" && ./configure -q PG_CONFIG="$PG_CONFIG" >"$CITUS_CACHE/configure.log" 2>&1 &&
      nice make -s -j2 with_llvm=no >"$CITUS_CACHE/make.log" 2>&1) || {
      log "build failed; see $CITUS_CACHE/configure.log and $CITUS_CACHE/make.log"
      tail -n 30 "$CITUS_CACHE/make.log" >&2 2>/dev/null || true
      exit 1
    }
    echo "$sum" >"$stamp"
  fi
  local pkglib
  pkglib="$("$PG_CONFIG" --pkglibdir)"
  if ! cmp -s "$tree/src/backend/distributed/citus.so" "$pkglib/citus.so"; then
    log "installing Citus into $pkglib"
    (cd "$tree" && $SUDO make -s with_llvm=no install >"$CITUS_CACHE/install.log" 2>&1)
  fi
}

node_port() { echo $((CITUS_PORT + $1)); }
node_dir() { echo "$DATA/node$1"; }

running() { as_pg "$PG_BIN/pg_ctl" -D "$(node_dir "$1")" status >/dev/null 2>&1; }

psql_node() {
  local n="$1" db="$2"
  shift 2
  as_pg psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(node_port "$n")" -U postgres -d "$db" "$@"
}

# One node: initdb once (trust on loopback only: a local test cluster; the coordinator reaches
# the workers over TCP as user postgres), citus preloaded, then started.
start_node() {
  local n="$1" dir port
  dir="$(node_dir "$n")"
  port="$(node_port "$n")"
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    as_pg "$PG_BIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >>"$dir/postgresql.conf" <<EOF
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 300
shared_buffers = 128MB
fsync = ${CITUS_FSYNC:-on}
max_prepared_transactions = 100
wal_level = logical
EOF
  fi
  if ! running "$n"; then
    as_pg "$PG_BIN/pg_ctl" -D "$dir" -l "$dir/postgres.log" -w -t 60 start >/dev/null ||
      {
        tail -n 20 "$dir/postgres.log" >&2
        exit 1
      }
  fi
}

# The database with citus and pg_trgm on a node (Citus 12.1 does not propagate CREATE DATABASE).
prepare_db() {
  local n="$1"
  if ! psql_node "$n" postgres -tAc "select 1 from pg_database where datname='$CITUS_DB'" | grep -q 1; then
    psql_node "$n" postgres -c "create database \"$CITUS_DB\""
  fi
  # Once: on a worker already in the cluster Citus refuses DDL, even a no-op IF NOT EXISTS.
  if [ "$(psql_node "$n" "$CITUS_DB" -tAc "select count(*) from pg_extension where extname in ('citus', 'pg_trgm')")" != 2 ]; then
    psql_node "$n" "$CITUS_DB" -c 'create extension if not exists citus' \
      -c 'create extension if not exists pg_trgm'
  fi
}

url() { echo "postgres://postgres@127.0.0.1:$CITUS_PORT/$CITUS_DB"; }

start() {
  build
  mkdir -p "$DATA"
  # The postgres user must reach the data directories under the cache (which may be in $HOME).
  if [ "$(id -u)" -eq 0 ]; then
    local d="$DATA"
    while [ "$d" != "/" ]; do
      chmod o+x "$d" 2>/dev/null || true
      d="$(dirname "$d")"
    done
  fi
  for n in 0 1 2; do start_node "$n"; done
  for n in 0 1 2; do prepare_db "$n"; done
  psql_node 0 "$CITUS_DB" -tAc "select citus_set_coordinator_host('127.0.0.1', $CITUS_PORT)" >/dev/null
  for n in 1 2; do
    psql_node 0 "$CITUS_DB" -tAc "select citus_add_node('127.0.0.1', $(node_port "$n"))" >/dev/null
  done
  log "coordinator on 127.0.0.1:$CITUS_PORT, workers on $(node_port 1) and $(node_port 2)"
  url
}

# A database of its own for a benchmark or an experiment: on the coordinator and the first
# WORKERS workers (default 2) with citus and pg_trgm, those workers registered; WORKERS=plain:
# on the coordinator only, without the citus extension (a single PostgreSQL 15 on the same
# server and settings, the baseline beside the cluster). Prints its URL. Exists already: kept.
create_db() {
  local name="$1" workers="${2:-2}" n
  [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || { log "create-db: bad database name '$name'"; exit 64; }
  if [ "$workers" = plain ]; then
    require_running 0
    if ! psql_node 0 postgres -tAc "select 1 from pg_database where datname='$name'" | grep -q 1; then
      psql_node 0 postgres -c "create database \"$name\""
      psql_node 0 "$name" -c 'create extension if not exists pg_trgm'
    fi
  else
    [[ "$workers" =~ ^[12]$ ]] || { log "create-db: WORKERS is 1, 2 or plain"; exit 64; }
    # shellcheck disable=SC2046
    require_running $(seq 0 "$workers")
    for n in $(seq 0 "$workers"); do CITUS_DB="$name" prepare_db "$n"; done
    psql_node 0 "$name" -tAc "select citus_set_coordinator_host('127.0.0.1', $CITUS_PORT)" >/dev/null
    for n in $(seq 1 "$workers"); do
      psql_node 0 "$name" -tAc "select citus_add_node('127.0.0.1', $(node_port "$n"))" >/dev/null
    done
  fi
  echo "postgres://postgres@127.0.0.1:$CITUS_PORT/$name"
}

# Drops a database of create-db on every node.
drop_db() {
  local name="$1" n
  [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || { log "drop-db: bad database name '$name'"; exit 64; }
  for n in 2 1 0; do
    if running "$n"; then
      psql_node "$n" postgres -c "drop database if exists \"$name\" with (force)" >/dev/null
    else
      log "drop-db: node$n (127.0.0.1:$(node_port "$n")) is not running: $name not dropped there"
    fi
  done
  return 0
}

add_node() {
  require_source
  start_node 3
  prepare_db 3
  echo "127.0.0.1:$(node_port 3)"
}

stop() {
  local stopped=0
  for n in 3 2 1 0; do
    if [ -f "$(node_dir "$n")/PG_VERSION" ] && running "$n"; then
      as_pg "$PG_BIN/pg_ctl" -D "$(node_dir "$n")" -m fast -w stop >/dev/null
      log "stopped node$n (127.0.0.1:$(node_port "$n"))"
      stopped=1
    fi
  done
  [ "$stopped" -eq 1 ] || log "stop: no node of $DATA was running"
}

# What runs, said on stdout in every case (exit 0 only when all three nodes answer, 3 when not):
# a caller that checks the exit status still learns which node is down and how to start it.
status() {
  local how
  how="$(start_hint)"
  if [ ! -f "$(node_dir 0)/PG_VERSION" ]; then
    echo "not running: no cluster at $DATA (never started here); $how"
    exit 3
  fi
  local ok=0 n role
  for n in 0 1 2; do
    role=worker
    [ "$n" -eq 0 ] && role=coordinator
    if running "$n"; then
      echo "node$n ($role) 127.0.0.1:$(node_port "$n"): running"
    else
      echo "node$n ($role) 127.0.0.1:$(node_port "$n"): not running ($(node_dir "$n"))"
      ok=3
    fi
  done
  if [ "$ok" -ne 0 ]; then
    echo "not running; $how"
    exit 3
  fi
  psql_node 0 "$CITUS_DB" -tAc 'select nodename, nodeport from pg_dist_node order by nodeport' || {
    echo "not answering: the coordinator runs but database $CITUS_DB does not answer; $how"
    exit 3
  }
  exit 0
}

case "${1:-}" in
  build) build ;;
  start) start ;;
  url) url ;;
  stop) stop ;;
  status) status ;;
  add-node) add_node ;;
  create-db) create_db "${2:?database name}" "${3:-2}" ;;
  drop-db) drop_db "${2:?database name}" ;;
  destroy)
    stop
    rm -rf "$DATA"
    log "deleted $DATA"
    ;;
  *)
    echo "usage: $0 build|start|url|status|stop|add-node|create-db|drop-db|destroy" >&2
    exit 64
    ;;
esac
