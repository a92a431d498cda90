#!/usr/bin/env bash
# Test services for Herald: PostgreSQL 15, Redis and NATS on loopback, on
# fixed non-default ports, with their data and logs under .tmp/services/,
# and a PostgreSQL 18 through scripts/pg18.sh (data under .tmp/pg18/).
# The convention (ports, credentials, variables) is shared by every test in
# the repository; see "Running the tests" in README.md.
#
#   scripts/services.sh start             install what is missing, start all, wait until each answers
#   scripts/services.sh stop              stop all
#   scripts/services.sh start-redis-extras  start only the Redis Sentinel set and the Redis Cluster
#   scripts/services.sh stop-redis-extras   stop only those
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
# shellcheck source=scripts/servicelib.sh
source "$ROOT/scripts/servicelib.sh"
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
# The Sentinel set: a master, its replica and three Sentinels watching it
# under SENTINEL_MASTER. The Redis Cluster: three masters, no replicas,
# each with its cluster bus on a port of its own (the default, port+10000,
# would be past 65535).
# HERALD_SERVICES_REDIS_EXTRAS_PORT moves all of them: they sit at fixed
# distances above it.
EXTRAS_PORT=${HERALD_SERVICES_REDIS_EXTRAS_PORT:-63800}
SENTINEL_DATA_PORTS=($((EXTRAS_PORT + 1)) $((EXTRAS_PORT + 2)))
SENTINEL_PORTS=($((EXTRAS_PORT + 11)) $((EXTRAS_PORT + 12)) $((EXTRAS_PORT + 13)))
SENTINEL_MASTER=herald-master
CLUSTER_PORTS=($((EXTRAS_PORT + 21)) $((EXTRAS_PORT + 22)) $((EXTRAS_PORT + 23)))
CLUSTER_BUS_PORTS=($((EXTRAS_PORT + 31)) $((EXTRAS_PORT + 32)) $((EXTRAS_PORT + 33)))

# PgBouncer in transaction mode in front of the PostgreSQL above.
PGB_PORT=${HERALD_SERVICES_PGBOUNCER_PORT:-64329}

# How long each service may take to accept connections, in seconds.
WAIT=${HERALD_SERVICES_WAIT:-60}

log() { echo "services.sh: $*" >&2; }
die() {
	echo "services.sh: error: $*" >&2
	exit 1
}

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
	[[ -x /usr/sbin/pgbouncer ]] || command -v pgbouncer >/dev/null || missing+=(pgbouncer)
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
	initdb_cluster "$PG_BIN" "$data" "$PG_LOG" scripts/services.sh
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

# ---------------------------------------------------------------- Redis Sentinel and Cluster

# Each extra redis-server has a directory of its own under EXTRAS_DIR with
# its pid file, log and (Sentinel, Cluster) the config file the server
# rewrites. A set that is not wholly running is started again from
# scratch: its data is disposable, and a Sentinel's rewritten config or a
# node's cluster config left from an earlier run would describe a
# topology that no longer exists.
EXTRAS_DIR="$DIR/redis-extras"

redis_ping_port() { [[ $(timeout 5 redis-cli -h "$HOST" -p "$1" ping 2>/dev/null) == PONG ]]; }

# extra_pid prints the pid of extra instance $1 when it runs.
extra_pid() { pid_of "$EXTRAS_DIR/$1/pid" redis-server; }

# extra_start starts extra instance $1 on port $2; the other arguments go
# to redis-server (a config file first, for a Sentinel).
extra_start() {
	local name=$1 port=$2
	shift 2
	local d="$EXTRAS_DIR/$name"
	port_open "$port" && port_taken "$port" HERALD_SERVICES_REDIS_EXTRAS_PORT
	redis-server "$@" --bind "$HOST" --port "$port" --daemonize yes \
		--pidfile "$d/pid" --logfile "$d/log" --dir "$d" 9>&- </dev/null || {
		tail_log "$d/log"
		die "redis-server $name did not start"
	}
	wait_for "Redis $name on $HOST:$port" redis_ping_port "$port" || {
		tail_log "$d/log"
		die "Redis $name is not answering on $HOST:$port"
	}
}

# extras_stop stops the extra instances named in the arguments.
extras_stop() {
	local name pid
	for name in "$@"; do
		pid=$(extra_pid "$name") || continue
		stop_pid "redis-server $name" "$pid"
		rm -f "$EXTRAS_DIR/$name/pid"
	done
}

# fresh_dir empties the directory of extra instance $1.
fresh_dir() {
	rm -rf "${EXTRAS_DIR:?}/$1"
	mkdir -p "$EXTRAS_DIR/$1"
}

# all_running reports whether every extra instance named runs.
all_running() {
	local name
	for name in "$@"; do extra_pid "$name" >/dev/null || return 1; done
}

SENTINEL_NAMES=(sentinel-data-1 sentinel-data-2 sentinel-1 sentinel-2 sentinel-3)

# sentinel_field prints field $2 of SENTINEL MASTER as the Sentinel on
# port $1 sees it.
sentinel_field() {
	timeout 5 redis-cli -h "$HOST" -p "$1" sentinel master "$SENTINEL_MASTER" 2>/dev/null |
		awk -v k="$2" 'NR % 2 == 1 && $0 == k { getline; print; exit }'
}

# sentinel_ready: every Sentinel sees the master up, its replica and the
# two other Sentinels, so that a failover can be agreed and carried out.
sentinel_ready() {
	local p
	for p in "${SENTINEL_PORTS[@]}"; do
		[[ $(sentinel_field "$p" flags) == master ]] || return 1
		[[ $(sentinel_field "$p" num-slaves) == 1 ]] || return 1
		[[ $(sentinel_field "$p" num-other-sentinels) == 2 ]] || return 1
	done
}

sentinel_start() {
	if all_running "${SENTINEL_NAMES[@]}"; then
		wait_for "the Redis Sentinel set" sentinel_ready || die "the Redis Sentinel set runs but is not ready"
		log "Redis Sentinel set already running (Sentinels on $HOST:${SENTINEL_PORTS[*]})"
		return
	fi
	extras_stop "${SENTINEL_NAMES[@]}"
	local master=${SENTINEL_DATA_PORTS[0]} i
	# Either data server may be promoted, so both get the same settings. A
	# replica resynchronises at once after a failover instead of after the
	# default diskless sync delay of 5 s.
	local data=(--save '' --appendonly no --repl-diskless-sync yes --repl-diskless-sync-delay 0)
	fresh_dir sentinel-data-1
	extra_start sentinel-data-1 "$master" "${data[@]}"
	fresh_dir sentinel-data-2
	extra_start sentinel-data-2 "${SENTINEL_DATA_PORTS[1]}" "${data[@]}" --replicaof "$HOST" "$master"
	for i in 0 1 2; do
		local name=sentinel-$((i + 1))
		fresh_dir "$name"
		# A Sentinel rewrites its config file with what it learns, so each
		# has one of its own. With a quorum of 2, the Sentinels agree that
		# a master that stopped answering for 1 s is down.
		cat >"$EXTRAS_DIR/$name/sentinel.conf" <<EOF
sentinel monitor $SENTINEL_MASTER $HOST $master 2
sentinel down-after-milliseconds $SENTINEL_MASTER 1000
sentinel failover-timeout $SENTINEL_MASTER 10000
sentinel parallel-syncs $SENTINEL_MASTER 1
EOF
		extra_start "$name" "${SENTINEL_PORTS[$i]}" "$EXTRAS_DIR/$name/sentinel.conf" --sentinel
	done
	wait_for "the Redis Sentinel set" sentinel_ready || {
		tail_log "$EXTRAS_DIR/sentinel-1/log"
		die "the Redis Sentinels did not discover the replica and each other"
	}
	log "Redis Sentinel set running: master $SENTINEL_MASTER on $HOST:$master, replica on $HOST:${SENTINEL_DATA_PORTS[1]}, Sentinels on $HOST:${SENTINEL_PORTS[*]} (logs: $EXTRAS_DIR)"
}

CLUSTER_NAMES=(cluster-1 cluster-2 cluster-3)

cluster_ready() {
	local p
	for p in "${CLUSTER_PORTS[@]}"; do
		timeout 5 redis-cli -h "$HOST" -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
	done
}

cluster_start() {
	if all_running "${CLUSTER_NAMES[@]}"; then
		wait_for "the Redis Cluster" cluster_ready || die "the Redis Cluster runs but its state is not ok"
		log "Redis Cluster already running on $HOST:${CLUSTER_PORTS[*]}"
		return
	fi
	extras_stop "${CLUSTER_NAMES[@]}"
	local i addrs=()
	for i in 0 1 2; do
		local name=cluster-$((i + 1))
		fresh_dir "$name"
		extra_start "$name" "${CLUSTER_PORTS[$i]}" --save '' --appendonly no \
			--cluster-enabled yes --cluster-port "${CLUSTER_BUS_PORTS[$i]}" \
			--cluster-config-file "$EXTRAS_DIR/$name/nodes.conf" --cluster-node-timeout 2000
		addrs+=("$HOST:${CLUSTER_PORTS[$i]}")
	done
	timeout "$WAIT" redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes \
		>"$EXTRAS_DIR/cluster-create.log" 2>&1 9>&- </dev/null || {
		tail_log "$EXTRAS_DIR/cluster-create.log"
		die "redis-cli --cluster create failed"
	}
	wait_for "the Redis Cluster" cluster_ready || {
		tail_log "$EXTRAS_DIR/cluster-1/log"
		die "the Redis Cluster did not reach state ok"
	}
	log "Redis Cluster running on $HOST:${CLUSTER_PORTS[*]} (logs: $EXTRAS_DIR)"
}

extras_start() {
	sentinel_start
	cluster_start
}

extras_stop_all() {
	extras_stop "${CLUSTER_NAMES[@]}" "${SENTINEL_NAMES[@]}"
	log "Redis Sentinel set and Cluster stopped"
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

# ---------------------------------------------------------------- PgBouncer

PGB_DIR="$DIR/pgbouncer"
PGB_PID="$PGB_DIR/pgbouncer.pid"
PGB_LOG="$DIR/pgbouncer.log"

pgbouncer_bin() {
	if [[ -x /usr/sbin/pgbouncer ]]; then echo /usr/sbin/pgbouncer; else command -v pgbouncer; fi
}

pgbouncer_ready() {
	PGPASSWORD=$PG_PASSWORD timeout 5 "$PG_BIN/psql" -h "$HOST" -p "$PGB_PORT" -U "$PG_USER" -d "$PG_DB" -tAc 'select 1' >/dev/null 2>&1
}

# pgbouncer_start runs PgBouncer in transaction mode, the mode deployments
# put in front of PostgreSQL and the hardest for a client: no session state
# (prepared statements, LISTEN, session settings) survives a transaction.
# It runs as the postgres user, as PostgreSQL does.
pgbouncer_start() {
	if pid_of "$PGB_PID" pgbouncer >/dev/null; then
		wait_for "PgBouncer on $HOST:$PGB_PORT" pgbouncer_ready || die "pgbouncer runs but does not answer on $HOST:$PGB_PORT"
		log "PgBouncer already running on $HOST:$PGB_PORT"
		return
	fi
	port_open "$PGB_PORT" && port_taken "$PGB_PORT" HERALD_SERVICES_PGBOUNCER_PORT
	mkdir -p "$PGB_DIR"
	cat >"$PGB_DIR/pgbouncer.ini" <<INI
[databases]
* = host=$HOST port=$PG_PORT

[pgbouncer]
listen_addr = $HOST
listen_port = $PGB_PORT
unix_socket_dir =
auth_type = plain
auth_file = $PGB_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
ignore_startup_parameters = extra_float_digits
logfile = $PGB_LOG
pidfile = $PGB_PID
INI
	printf '"%s" "%s"\n' "$PG_USER" "$PG_PASSWORD" >"$PGB_DIR/userlist.txt"
	touch "$PGB_LOG"
	if is_root; then chown -R postgres "$PGB_DIR" "$PGB_LOG"; fi
	as_pg "$(pgbouncer_bin)" -d "$PGB_DIR/pgbouncer.ini" >>"$PGB_LOG" 2>&1 9>&- </dev/null || {
		tail_log "$PGB_LOG"
		die "pgbouncer did not start"
	}
	wait_for "PgBouncer on $HOST:$PGB_PORT" pgbouncer_ready || {
		tail_log "$PGB_LOG"
		die "PgBouncer is not answering on $HOST:$PGB_PORT"
	}
	log "PgBouncer (transaction mode) running on $HOST:$PGB_PORT (log: $PGB_LOG)"
}

pgbouncer_stop() {
	local pid
	pid=$(pid_of "$PGB_PID" pgbouncer) || return 0
	stop_pid pgbouncer "$pid"
	rm -f "$PGB_PID"
	log "PgBouncer stopped"
}

# ---------------------------------------------------------------- PostgreSQL 18

# pg18 runs a command of scripts/pg18.sh, which keeps the PostgreSQL 18
# server (HERALD_SERVICES_PG18_PORT, 64318 by default) and its binaries
# from Maven Central. It must not inherit our lock (9): the server it
# starts would hold it.
pg18() { "$ROOT/scripts/pg18.sh" "$1" 9>&-; }

# ---------------------------------------------------------------- commands

# join_addrs prints HOST:port for each port, comma-separated.
join_addrs() {
	local out="" p
	for p in "$@"; do out+="${out:+,}$HOST:$p"; done
	echo "$out"
}

print_env() {
	cat <<EOF
export HERALD_TEST_POSTGRES_DSN='postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB?sslmode=disable'
export HERALD_TEST_REDIS_ADDR='$HOST:$REDIS_PORT'
export HERALD_TEST_NATS_URL='nats://$HOST:$NATS_PORT'
export HERALD_TEST_POSTGRES_RESTART='env HERALD_SERVICES_PG_PORT=$PG_PORT $SELF restart-postgres'
export HERALD_TEST_REDIS_SENTINEL_ADDRS='$(join_addrs "${SENTINEL_PORTS[@]}")'
export HERALD_TEST_REDIS_SENTINEL_MASTER='$SENTINEL_MASTER'
export HERALD_TEST_REDIS_CLUSTER_ADDRS='$(join_addrs "${CLUSTER_PORTS[@]}")'
export HERALD_TEST_PGBOUNCER_DSN='postgres://$PG_USER:$PG_PASSWORD@$HOST:$PGB_PORT/$PG_DB?sslmode=disable&default_query_exec_mode=exec'
EOF
	pg18 env
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
	if pid_of "$PGB_PID" pgbouncer >/dev/null; then echo "pgbouncer: running on $HOST:$PGB_PORT"; else echo "pgbouncer: stopped"; fi
	pg18 status
	if all_running "${SENTINEL_NAMES[@]}"; then
		echo "redis sentinel: running, Sentinels on $(join_addrs "${SENTINEL_PORTS[@]}")"
	else
		echo "redis sentinel: stopped"
	fi
	if all_running "${CLUSTER_NAMES[@]}"; then
		echo "redis cluster: running on $(join_addrs "${CLUSTER_PORTS[@]}")"
	else
		echo "redis cluster: stopped"
	fi
}

usage() {
	echo "usage: $0 start|stop|status|env|restart-postgres|start-redis-extras|stop-redis-extras" >&2
	exit 2
}

[[ $# -eq 1 ]] || usage
case $1 in
start)
	lock
	install_packages
	pg_start
	pgbouncer_start
	redis_start
	nats_start
	extras_start
	# Last: a failure to fetch PostgreSQL 18 leaves every other service
	# running.
	pg18 start
	;;
start-redis-extras)
	lock
	install_packages
	extras_start
	;;
stop-redis-extras)
	lock
	extras_stop_all
	;;
stop)
	lock
	pg18 stop
	extras_stop_all
	nats_stop
	redis_stop
	pgbouncer_stop
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
