#!/usr/bin/env bash
# Test services for Herald: PostgreSQL 15, Redis and NATS on loopback, on
# fixed non-default ports, with their data and logs under .tmp/services/.
# The convention (ports, credentials, variables) is shared by every test in
# the repository; see "Running the tests" in README.md.
#
#   scripts/services.sh start             install what is missing, start all, wait until each answers
#   scripts/services.sh stop              stop all
#   scripts/services.sh status            say what runs
#   scripts/services.sh env               print the export lines the tests read (eval-able)
#   scripts/services.sh restart-postgres  fast shutdown of PostgreSQL, start again, wait until it answers
#
# Exit status: 0 done, 1 failed, 2 usage, 3 a port is held by a process
# this script did not start.
#
# Every command is idempotent. Only processes started by this script (found
# through their pid files) are ever stopped; the distribution's own service
# instances are neither started nor touched.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$ROOT/scripts/services.sh"
DIR="$ROOT/.tmp/services"

HOST=127.0.0.1
# The ports are fixed by convention; the HERALD_SERVICES_*_PORT variables
# move an instance aside when another process already holds a port (the
# tests read the ports from the env lines, so they follow).
PG_PORT=${HERALD_SERVICES_PG_PORT:-54329}
PG_USER=herald
PG_PASSWORD=herald
PG_DB=herald_test
PG_VERSION=15
PG_BIN="/usr/lib/postgresql/$PG_VERSION/bin"
REDIS_PORT=${HERALD_SERVICES_REDIS_PORT:-63799}
NATS_PORT=${HERALD_SERVICES_NATS_PORT:-42229}

# How long each service may take to accept connections, in seconds.
WAIT=${HERALD_SERVICES_WAIT:-60}

log() { echo "services.sh: $*" >&2; }
die() {
	echo "services.sh: error: $*" >&2
	exit 1
}

# tail_log prints the end of a service log, so a failure explains itself
# without the reader having to find the file.
tail_log() {
	[[ -f "$1" ]] || return 0
	echo "--- last lines of $1:" >&2
	tail -n 20 "$1" >&2 || true
	echo "---" >&2
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# port_open reports whether something accepts TCP connections on HOST:$1.
port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# pid_of prints the pid in pid file $1 when that process is alive and its
# command name is $2; a stale or reused pid prints nothing.
pid_of() {
	local file=$1 name=$2 pid comm
	[[ -s "$file" ]] || return 1
	pid=$(tr -dc '0-9' <"$file")
	[[ -n "$pid" ]] || return 1
	comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
	[[ "$comm" == "$name"* ]] || return 1
	alive "$pid" || return 1
	echo "$pid"
}

# port_taken exits with status 3, which scripts/test.sh recognises.
port_taken() {
	echo "services.sh: error: port $HOST:$1 is taken by a process this script did not start" \
		"(see: ss -ltnp 'sport = :$1'); stop it, or set $2 to another port" >&2
	exit 3
}

# wait_for polls command "$@" until it succeeds or WAIT seconds pass.
wait_for() {
	local what=$1
	shift
	local deadline=$((SECONDS + WAIT))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			log "$what did not accept connections within ${WAIT}s"
			return 1
		fi
		sleep 0.2
	done
}

# alive reports whether pid $1 runs; a zombie waiting for its parent (here
# often init, which may reap late) has already exited.
alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n "$state" && "$state" != Z ]]
}

# stop_pid sends SIGTERM to pid $2 (named $1) and waits for it to exit.
stop_pid() {
	local name=$1 pid=$2 deadline=$((SECONDS + WAIT))
	kill -TERM "$pid" 2>/dev/null || return 0
	while alive "$pid"; do
		if ((SECONDS >= deadline)); then
			die "$name (pid $pid) did not exit within ${WAIT}s of SIGTERM"
		fi
		sleep 0.1
	done
}

# lock serialises commands that change state: tests may call
# restart-postgres from several packages at once. The daemons started under
# the lock must not inherit its descriptor (9), or the lock would outlive
# this script: every start command below closes it with 9>&-.
lock() {
	mkdir -p "$DIR"
	exec 9>"$DIR/.lock"
	flock -w $((WAIT * 3)) 9 || die "another services.sh still holds $DIR/.lock after $((WAIT * 3))s"
}

# ---------------------------------------------------------------- packages

install_packages() {
	local missing=()
	[[ -x "$PG_BIN/postgres" && -x "$PG_BIN/initdb" && -x "$PG_BIN/pg_ctl" ]] || missing+=("postgresql-$PG_VERSION")
	[[ -x "$PG_BIN/psql" ]] || missing+=("postgresql-client-$PG_VERSION")
	command -v redis-server >/dev/null || missing+=(redis-server)
	command -v redis-cli >/dev/null || missing+=(redis-tools)
	command -v nats-server >/dev/null || missing+=(nats-server)
	((${#missing[@]})) || return 0

	is_root || die "missing packages: ${missing[*]}; install them as root (apt-get install ${missing[*]}) and run again"
	command -v apt-get >/dev/null || die "missing packages: ${missing[*]}, and apt-get is not available to install them"
	log "installing ${missing[*]} (apt-get; output in $DIR/apt.log)"

	# Debian starts a package's service when it is installed unless
	# policy-rc.d says no; our own instances run on other ports, so the
	# distribution's default ones must stay down.
	local policy=/usr/sbin/policy-rc.d added_policy=""
	if [[ ! -e "$policy" ]]; then
		printf '#!/bin/sh\n# added by herald scripts/services.sh during apt-get install\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		added_policy=1
		# Removed below, or here if the install is interrupted.
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	local rc=0
	{
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"
	} >>"$DIR/apt.log" 2>&1 </dev/null || rc=$?
	if [[ -n "$added_policy" ]]; then
		rm -f "$policy"
		trap - EXIT
	fi
	if ((rc != 0)); then
		tail_log "$DIR/apt.log"
		die "apt-get install ${missing[*]} failed (exit $rc)"
	fi
}

# ---------------------------------------------------------------- PostgreSQL

PG_LOG="$DIR/postgres.log"

# as_pg runs a PostgreSQL server command as the postgres OS user: the
# server refuses to run as root.
as_pg() {
	if is_root; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pg_data prints the data directory: .tmp/services/pg, unless the postgres
# user cannot reach it (a checkout under a private home directory), in
# which case the data lives under /var/tmp and .tmp/services/pg links there.
pg_data() {
	local data="$DIR/pg"
	if ! is_root || runuser -u postgres -- test -x "$DIR" 2>/dev/null; then
		echo "$data"
		return
	fi
	local alt
	alt="/var/tmp/herald-services-$(echo -n "$ROOT" | sha256sum | cut -c1-12)/pg"
	if [[ ! -L "$data" ]]; then
		rm -rf "$data"
		ln -s "$alt" "$data"
	fi
	echo "$alt"
}

psql_herald() {
	PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=2 "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 \
		-h "$HOST" -p "$PG_PORT" -U "$PG_USER" "$@"
}

pg_init() {
	local data=$1
	[[ -s "$data/PG_VERSION" ]] && return 0
	log "creating the PostgreSQL cluster in $data"
	rm -rf "$data"
	mkdir -p "$data"
	local pwfile
	pwfile=$(mktemp)
	echo "$PG_PASSWORD" >"$pwfile"
	if is_root; then
		chown postgres:postgres "$data" "$pwfile"
		# The parent may be the /var/tmp fallback, created by root.
		chmod 755 "$(dirname "$data")"
	fi
	chmod 700 "$data"
	local rc=0
	# The test user is the cluster's superuser, so tests may create
	# databases, schemas and extensions freely. Connections are TCP only,
	# with a password, so no socket directory needs to be writable.
	as_pg "$PG_BIN/initdb" -D "$data" -U "$PG_USER" --pwfile="$pwfile" \
		--auth-host=scram-sha-256 --auth-local=scram-sha-256 --encoding=UTF8 --locale=C \
		>>"$PG_LOG" 2>&1 9>&- </dev/null || rc=$?
	rm -f "$pwfile"
	if ((rc != 0)); then
		tail_log "$PG_LOG"
		rm -rf "$data"
		die "initdb failed (exit $rc)"
	fi
	cat >>"$data/postgresql.conf" <<EOF

# herald scripts/services.sh
listen_addresses = '$HOST'
max_connections = 200
unix_socket_directories = ''
EOF
}

pg_running() { as_pg "$PG_BIN/pg_ctl" -D "$1" status >/dev/null 2>&1; }

pg_wait_ready() {
	wait_for "PostgreSQL on $HOST:$PG_PORT" timeout 5 "$SELF" psql-ready || {
		tail_log "$PG_LOG"
		die "PostgreSQL is not answering on $HOST:$PG_PORT"
	}
}

pg_ensure_db() {
	local exists
	exists=$(psql_herald -d postgres -tAc "select 1 from pg_database where datname = '$PG_DB'")
	[[ "$exists" == 1 ]] || psql_herald -d postgres -c "create database $PG_DB" >/dev/null
}

pg_start() {
	local data
	data=$(pg_data)
	touch "$PG_LOG"
	pg_init "$data"
	if pg_running "$data"; then
		local port
		port=$(sed -n 4p "$data/postmaster.pid" 2>/dev/null || true)
		[[ "$port" == "$PG_PORT" ]] || die "our PostgreSQL already runs on port ${port:-?}, not $PG_PORT; run '$SELF stop' first"
		pg_wait_ready
		pg_ensure_db
		log "PostgreSQL already running on $HOST:$PG_PORT"
		return
	fi
	port_open "$PG_PORT" && port_taken "$PG_PORT" HERALD_SERVICES_PG_PORT
	# pg_ctl's own output and the server's log both go to PG_LOG, opened
	# here: nothing keeps the caller's stdout open after we return.
	# The port is given here, not in postgresql.conf, so that
	# HERALD_SERVICES_PG_PORT can move it; restart reuses it.
	as_pg "$PG_BIN/pg_ctl" -D "$data" -o "-p $PG_PORT" -w -t "$WAIT" start >>"$PG_LOG" 2>&1 9>&- </dev/null || {
		tail_log "$PG_LOG"
		die "PostgreSQL did not start (log: $PG_LOG)"
	}
	pg_wait_ready
	pg_ensure_db
	log "PostgreSQL running on $HOST:$PG_PORT (log: $PG_LOG)"
}

pg_stop() {
	local data
	data=$(pg_data)
	[[ -s "$data/PG_VERSION" ]] && pg_running "$data" || return 0
	as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t "$WAIT" stop >>"$PG_LOG" 2>&1 9>&- </dev/null || {
		tail_log "$PG_LOG"
		die "PostgreSQL did not stop"
	}
	log "PostgreSQL stopped"
}

pg_restart() {
	local data
	data=$(pg_data)
	if [[ ! -s "$data/PG_VERSION" ]] || ! pg_running "$data"; then
		log "PostgreSQL was not running; starting it"
		pg_start
		return
	fi
	as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w -t "$WAIT" restart >>"$PG_LOG" 2>&1 9>&- </dev/null || {
		tail_log "$PG_LOG"
		die "PostgreSQL did not restart"
	}
	pg_wait_ready
	log "PostgreSQL restarted on $HOST:$PG_PORT"
}

# ---------------------------------------------------------------- Redis

REDIS_PID="$DIR/redis.pid"
REDIS_LOG="$DIR/redis.log"

redis_ping() { [[ $(timeout 5 redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]; }

redis_start() {
	if pid_of "$REDIS_PID" redis-server >/dev/null; then
		wait_for "Redis on $HOST:$REDIS_PORT" redis_ping || die "Redis runs but does not answer on $HOST:$REDIS_PORT"
		log "Redis already running on $HOST:$REDIS_PORT"
		return
	fi
	port_open "$REDIS_PORT" && port_taken "$REDIS_PORT" HERALD_SERVICES_REDIS_PORT
	mkdir -p "$DIR/redis"
	rm -f "$REDIS_PID"
	# No persistence: test data is disposable.
	redis-server --bind "$HOST" --port "$REDIS_PORT" --daemonize yes \
		--pidfile "$REDIS_PID" --logfile "$REDIS_LOG" --dir "$DIR/redis" \
		--save '' --appendonly no 9>&- </dev/null || {
		tail_log "$REDIS_LOG"
		die "redis-server did not start"
	}
	wait_for "Redis on $HOST:$REDIS_PORT" redis_ping || {
		tail_log "$REDIS_LOG"
		die "Redis is not answering on $HOST:$REDIS_PORT"
	}
	log "Redis running on $HOST:$REDIS_PORT (log: $REDIS_LOG)"
}

redis_stop() {
	local pid
	pid=$(pid_of "$REDIS_PID" redis-server) || return 0
	stop_pid redis-server "$pid"
	rm -f "$REDIS_PID"
	log "Redis stopped"
}

# ---------------------------------------------------------------- NATS

NATS_PID="$DIR/nats.pid"
NATS_LOG="$DIR/nats.log"

# nats_ready reads the INFO line a NATS server greets every client with.
nats_ready() {
	local fd line
	exec {fd}<>"/dev/tcp/$HOST/$NATS_PORT" || return 1
	read -r -t 2 line <&"$fd" || line=""
	exec {fd}>&-
	[[ "$line" == INFO* ]]
}

nats_start() {
	if pid_of "$NATS_PID" nats-server >/dev/null; then
		wait_for "NATS on $HOST:$NATS_PORT" nats_ready || die "nats-server runs but does not answer on $HOST:$NATS_PORT"
		log "NATS already running on $HOST:$NATS_PORT"
		return
	fi
	port_open "$NATS_PORT" && port_taken "$NATS_PORT" HERALD_SERVICES_NATS_PORT
	rm -f "$NATS_PID"
	# nats-server has no daemon mode: detach it into its own session so the
	# caller's terminal signals and pipes do not reach it.
	setsid nats-server -a "$HOST" -p "$NATS_PORT" -P "$NATS_PID" >>"$NATS_LOG" 2>&1 9>&- </dev/null &
	wait_for "NATS on $HOST:$NATS_PORT" nats_ready || {
		tail_log "$NATS_LOG"
		die "NATS is not answering on $HOST:$NATS_PORT"
	}
	log "NATS running on $HOST:$NATS_PORT (log: $NATS_LOG)"
}

nats_stop() {
	local pid
	pid=$(pid_of "$NATS_PID" nats-server) || return 0
	stop_pid nats-server "$pid"
	rm -f "$NATS_PID"
	log "NATS stopped"
}

# ---------------------------------------------------------------- commands

print_env() {
	cat <<EOF
export HERALD_TEST_POSTGRES_DSN='postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=disable'
export HERALD_TEST_REDIS_ADDR='$HOST:$REDIS_PORT'
export HERALD_TEST_NATS_URL='nats://$HOST:$NATS_PORT'
export HERALD_TEST_POSTGRES_RESTART='env HERALD_SERVICES_PG_PORT=$PG_PORT $SELF restart-postgres'
EOF
}

status() {
	local data
	data=$(pg_data)
	if [[ -s "$data/PG_VERSION" ]] && pg_running "$data"; then
		echo "postgres: running on $HOST:$(sed -n 4p "$data/postmaster.pid" 2>/dev/null)"
	else
		echo "postgres: stopped"
	fi
	if pid_of "$REDIS_PID" redis-server >/dev/null; then echo "redis: running on $HOST:$REDIS_PORT"; else echo "redis: stopped"; fi
	if pid_of "$NATS_PID" nats-server >/dev/null; then echo "nats: running on $HOST:$NATS_PORT"; else echo "nats: stopped"; fi
}

usage() {
	echo "usage: $0 start|stop|status|env|restart-postgres" >&2
	exit 2
}

[[ $# -eq 1 ]] || usage
case $1 in
start)
	lock
	install_packages
	pg_start
	redis_start
	nats_start
	;;
stop)
	lock
	nats_stop
	redis_stop
	if [[ -x "$PG_BIN/pg_ctl" ]]; then pg_stop; fi
	;;
restart-postgres)
	lock
	pg_restart
	;;
status) status ;;
# Used by pg_wait_ready, so that timeout can bound one attempt.
psql-ready) psql_herald -d postgres -tAc 'select 1' >/dev/null ;;
env) print_env ;;
*) usage ;;
esac
