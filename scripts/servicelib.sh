# Sourced by scripts/services.sh and scripts/pg18.sh: the helpers both
# need, and the one way the test PostgreSQL clusters are made, whatever the
# version. The sourcing script defines log and die (with its own name in
# the messages), and HOST, PG_USER and PG_PASSWORD.

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

# as_pg runs a server command as the postgres OS user when we are root (the
# server refuses to run as root).
as_pg() {
	if is_root; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# initdb_cluster BIN DATA LOG MARK makes a new cluster in DATA (emptied
# first) with BIN's initdb. The test user is the cluster's superuser, so
# tests may create databases, schemas, roles and extensions freely.
# Connections are TCP only, with a password, so no socket directory needs
# to be writable. MARK names the script in postgresql.conf.
initdb_cluster() {
	local bin=$1 data=$2 logf=$3 mark=$4
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
	# initdb must not inherit the scripts' locks (fd 8: pg18.sh, fd 9:
	# services.sh), or a server it leaves behind would hold them.
	as_pg "$bin/initdb" -D "$data" -U "$PG_USER" --pwfile="$pwfile" \
		--auth-host=scram-sha-256 --auth-local=scram-sha-256 --encoding=UTF8 --locale=C \
		>>"$logf" 2>&1 8>&- 9>&- </dev/null || rc=$?
	rm -f "$pwfile"
	if ((rc != 0)); then
		tail_log "$logf"
		rm -rf "$data"
		die "initdb failed (exit $rc)"
	fi
	cat >>"$data/postgresql.conf" <<CONF

# herald $mark
listen_addresses = '$HOST'
max_connections = 200
unix_socket_directories = ''
CONF
}
