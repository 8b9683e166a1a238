#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and CI (Debian 12), separate from any system cluster:
#   bash scripts/postgres.sh          install postgresql if missing (as root), start a cluster in
#                                     /tmp/baton-pg on 127.0.0.1:55432, create role baton/baton and
#                                     database baton_test, wait until it answers, print its URL last
#   bash scripts/postgres.sh stop     stop it (data kept; the next start is fast)
#   bash scripts/postgres.sh destroy  stop it and delete /tmp/baton-pg
# Idempotent: re-running while it is up only re-checks the role and database. Progress goes to
# stderr, so `url=$(bash scripts/postgres.sh)` captures just the URL.
# Overrides: BATON_PG_PORT (55432), BATON_PG_DIR (/tmp/baton-pg).
set -euo pipefail

PORT="${BATON_PG_PORT:-55432}"
BASE="${BATON_PG_DIR:-/tmp/baton-pg}"
DATA="$BASE/data"
SOCK="$BASE"
LOG="$BASE/postgres.log"
URL="postgres://baton:baton@127.0.0.1:${PORT}/baton_test"

log() { echo "postgres.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

bindir() {
  # Highest installed major version.
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}

# Run a command as the cluster's owner: the postgres user when we are root (the server refuses to
# run as root), otherwise ourselves.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

install_postgres() {
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not installed; run as root or: apt-get install -y postgresql"
  log "installing postgresql (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
}

running() {
  [ -n "${BIN:-}" ] && [ -f "$DATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

stop_cluster() {
  BIN=$(bindir || true)
  if running; then
    log "stopping the cluster in $DATA"
    as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2
  else
    log "not running"
  fi
}

case "${1:-start}" in
  stop)
    stop_cluster
    exit 0
    ;;
  destroy)
    stop_cluster
    rm -rf "$BASE"
    log "removed $BASE"
    exit 0
    ;;
  start) ;;
  *) die "usage: $0 [start|stop|destroy]" ;;
esac

BIN=$(bindir || true)
if [ -z "$BIN" ]; then
  install_postgres
  BIN=$(bindir || true)
  [ -n "$BIN" ] || die "postgresql installed but no initdb under /usr/lib/postgresql/*/bin"
fi
VERSION=$(basename "$(dirname "$BIN")")

if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || die "the postgres system user is missing (reinstall postgresql-common)"
  install -d -m 0700 -o postgres -g postgres "$BASE"
else
  install -d -m 0700 "$BASE"
fi

# A data dir from another major version, or a half-finished initdb, is thrown away.
if [ -d "$DATA" ] && ! running; then
  if [ ! -f "$DATA/PG_VERSION" ] || [ "$(cat "$DATA/PG_VERSION")" != "$VERSION" ]; then
    log "discarding an unusable data dir in $DATA"
    rm -rf "$DATA"
  fi
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
  log "initdb (PostgreSQL $VERSION) in $DATA"
  # Local socket: trust (the socket dir is 0700, owner only). TCP: scram-sha-256 passwords.
  as_owner "$BIN/initdb" -D "$DATA" -U postgres -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 >"$BASE/initdb.log" 2>&1 ||
    { cat "$BASE/initdb.log" >&2; die "initdb failed"; }
fi

if ! running; then
  if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" 2>/dev/null; then
    die "port $PORT is already taken by another server (set BATON_PG_PORT)"
  fi
  log "starting on 127.0.0.1:$PORT"
  # Throwaway data: durability off for speed.
  as_owner "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $SOCK -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >&2 || { tail -n 30 "$LOG" >&2; die "the server did not start (log: $LOG)"; }
else
  log "already running in $DATA"
fi

for _ in $(seq 1 60); do
  "$BIN/pg_isready" -q -h "$SOCK" -p "$PORT" && break
  sleep 0.5
done
"$BIN/pg_isready" -q -h "$SOCK" -p "$PORT" || die "the server does not answer (log: $LOG)"

psql_admin() { as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres -d postgres "$@"; }

psql_admin >&2 <<'SQL'
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'baton') THEN
    CREATE ROLE baton LOGIN CREATEDB PASSWORD 'baton';
  ELSE
    ALTER ROLE baton LOGIN CREATEDB PASSWORD 'baton';
  END IF;
END
$$;
SELECT 'CREATE DATABASE baton_test OWNER baton'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'baton_test') \gexec
SQL

# Prove the URL works over TCP with the password, as the tests will use it.
PGPASSWORD=baton PGCONNECT_TIMEOUT=5 "$BIN/psql" -X -q -At "$URL" -c "select 1" >/dev/null ||
  die "cannot connect as baton over TCP (log: $LOG)"

log "ready"
echo "$URL"
