# Sourced by scripts/services.sh and scripts/pg18.sh: the one way the test
# PostgreSQL clusters are made, whatever the version. The sourcing script
# defines log, die, tail_log, is_root and as_pg, and HOST, PG_USER and
# PG_PASSWORD.

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
