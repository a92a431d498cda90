# Shared by the bench/*.sh scenarios: build herald and herald-bench, start
# nodes on loopback, stop everything on exit, describe the machine.
# Source it; it sets ROOT, BIN (the server), BENCH (the load tool), RUN (this
# run's result folder) and a trap.
#
# Environment:
#   ENGINE=memory|postgres|redis   engine of the nodes (memory by default). The memory
#                                  engine cannot connect nodes, so scenarios that need
#                                  two nodes fall back to one node with it (and say so).
#                                  postgres and redis use the test services of
#                                  scripts/services.sh (export HERALD_SERVICES_PG_PORT
#                                  etc. when they run on moved ports), under a schema
#                                  (key prefix) of the run's own, dropped at exit.
#   BENCH_POSTGRES_DSN=postgres://… with ENGINE=postgres: use this PostgreSQL instead of
#                                  the test services (long runs, while tests restart those)
#   HISTORY=0                      history_size of the bench channels (0: no history);
#                                  above 0 they also keep it for history_ttl 5m and
#                                  allow recovery
#   FORMAT=protobuf|json           client protocol of the load tool (protobuf by default:
#                                  it costs the load generator a quarter of JSON's CPU,
#                                  which matters when it shares two cores with the server)
#   WRITE_COALESCE=4ms             the nodes' client.write_coalesce, the bound of the adaptive
#                                  interval (4ms, the default)
#   WRITE_COALESCE_OFF=false       true: the nodes' client.write_coalesce_off (no coalescing)
#   NODE_GOMAXPROCS=, NODE_CPUS=   the nodes' GOMAXPROCS and taskset CPU list (unset: all),
#                                  leaving the load tool unconstrained
#   NODE_ENV=                      NAME=VALUE pairs, space-separated, in the nodes' environment
#                                  only (e.g. "GOGC=400 GODEBUG=gctrace=1"), not the load tool's
#   NODE_CGROUP=                   a cgroup v1 folder (e.g. /sys/fs/cgroup/cpu/x) the nodes
#                                  start in (set by bench/sidebyside.sh for its CPU quota)
#   PING_INTERVAL=25s PONG_TIMEOUT=8s  the nodes' client.ping_interval and pong_timeout (the defaults)
#   NODE_WRITE_TIMEOUT=1s          the nodes' websocket.write_timeout (the default): how long a client
#                                  may take less than 16 KiB before its connection closes with 3009
#   SHARDS=1                       with postgres or redis: shards of the engine (the largest
#                                  number a script uses). PostgreSQL shards are
#                                  BENCH_POSTGRES_SHARD_DSNS (space-separated DSNs, separate
#                                  clusters), else the test services' PostgreSQL 15 and 18;
#                                  with SHARDS above 1, every Redis shard is a redis-server the
#                                  run starts on BASE_PORT+900+i. A script may use fewer (SHARDS_N).
#   PG_SHARD_CLUSTERS=auto         with postgres: where the shards' clusters come from. auto: the
#                                  run starts private clusters when SHARDS needs more than
#                                  BENCH_POSTGRES_SHARD_DSNS (or the test services' two) give;
#                                  private: always (also for SHARDS=1, so that 1, 2 and 4
#                                  shards run on alike clusters); given: never. A private
#                                  cluster is a fresh initdb of PG_SHARD_BIN in the run's work
#                                  folder on BASE_PORT+950+i (loopback, trust authentication, a
#                                  herald database, the services' settings: fsync on,
#                                  shared_buffers 128MB), stopped and deleted at exit.
#   PG_SHARD_BIN=/usr/lib/postgresql/15/bin  the private clusters' PostgreSQL
#   PG_SHARD_MAX_CONNECTIONS=200   the private clusters' max_connections
#   BASE_PORT=18200                first node's port; node i listens on BASE_PORT+i
#   NODE_CHANNEL_YAML=             more keys of the nodes' channel section, indented two
#                                  spaces (e.g. namespaces:), set by scripts that need them
#   NODE_CLIENT_YAML=              likewise, more keys of the nodes' client section
#   NODE_LOG_LEVEL=warn            the nodes' log.level (info logs why a client was closed
#                                  as slow, which overload.sh wants)
#   RESULTS=bench/results          where result folders go
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$ROOT/.tmp/bin/herald"
BENCH="$ROOT/.tmp/bin/herald-bench"
ENGINE=${ENGINE:-memory}
FORMAT=${FORMAT:-protobuf}
BASE_PORT=${BASE_PORT:-18200}
SECRET=bench-secret
API_KEY=bench-api-key
RESULTS=${RESULTS:-$ROOT/bench/results}
HISTORY=${HISTORY:-0}
WRITE_COALESCE=${WRITE_COALESCE:-4ms}
WRITE_COALESCE_OFF=${WRITE_COALESCE_OFF:-false}
PING_INTERVAL=${PING_INTERVAL:-25s}
PONG_TIMEOUT=${PONG_TIMEOUT:-8s}
NODE_LOG_LEVEL=${NODE_LOG_LEVEL:-warn}
# The run's own PostgreSQL schema and Redis key prefix, so that runs and
# tests sharing the services never see each other's streams.
ENGINE_SCHEMA="herald_bench_$$"

NODE_PIDS=()
NODE_PORTS=()
# The engine's shards: SHARD_DSNS (PostgreSQL) or SHARD_ADDRS (Redis),
# of which engine_yaml uses the first SHARDS_N.
SHARDS=${SHARDS:-1}
SHARDS_N=$SHARDS
SHARD_DSNS=()
SHARD_ADDRS=()
SHARD_REDIS_PIDS=()
# Private PostgreSQL clusters (pg_private_start): their data folders, in
# shard order, and the folder that holds them.
PG_SHARD_BIN=${PG_SHARD_BIN:-/usr/lib/postgresql/15/bin}
PG_SHARD_MAX_CONNECTIONS=${PG_SHARD_MAX_CONNECTIONS:-200}
PG_PRIVATE_DATA=()
PG_PRIVATE_BASE=""

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
die() {
	echo "error: $*" >&2
	exit 1
}

# start_run NAME: makes the result folder and the work folder, builds
# herald and herald-bench and installs the exit trap.
start_run() {
	local name=$1
	RUN="$RESULTS/$name-$(date +%Y%m%d-%H%M%S)"
	WORK="$ROOT/.tmp/bench/$name"
	mkdir -p "$RUN" "$WORK"
	trap 'stop_all; stop_shards' EXIT
	trap 'exit 130' INT TERM
	log "building herald and herald-bench"
	# herald-bench lives in the bench module (bench/go.mod), herald in the root one.
	(cd "$ROOT" && go build -o "$BIN" ./cmd/herald) && (cd "$ROOT/bench" && go build -o "$BENCH" ./cmd/herald-bench)
	engine_prepare
	describe_machine >"$RUN/machine.txt"
	log "results go to ${RUN#"$ROOT"/}"
}

# engine_prepare starts what the engine needs (scripts/services.sh
# conventions) and sets the variables engine_yaml uses.
engine_prepare() {
	case "$ENGINE" in
	memory) ;;
	postgres | redis)
		if [[ "$ENGINE" == postgres ]] && pg_private_wanted; then
			# Clusters of the run's own, one per shard.
			pg_private_start
			return
		fi
		if [[ "$ENGINE" == redis ]] && ((SHARDS > 1)); then
			# Redis servers of the run's own, one per shard.
			shards_prepare
			return
		fi
		if [[ "$ENGINE" == postgres && -n "${BENCH_POSTGRES_DSN:-}" ]]; then
			# A PostgreSQL of the run's own, away from the test services
			# (which tests restart).
			export HERALD_TEST_POSTGRES_DSN=$BENCH_POSTGRES_DSN
			shards_prepare
			return
		fi
		# With the services' variables exported already (eval of
		# scripts/services.sh env, perhaps of another checkout), use them
		# as they are.
		if [[ -z "${HERALD_TEST_REDIS_ADDR:-}" || -z "${HERALD_TEST_POSTGRES_DSN:-}" ]]; then
			"$ROOT/scripts/services.sh" start >&2
			eval "$("$ROOT/scripts/services.sh" env)"
		fi
		;;
	*) die "ENGINE=$ENGINE: want memory, postgres or redis" ;;
	esac
	shards_prepare
}

# shards_prepare fills SHARD_DSNS or SHARD_ADDRS with SHARDS shards,
# starting the Redis servers of shards above one.
shards_prepare() {
	[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "SHARDS: want a positive integer, got $SHARDS"
	case "$ENGINE" in
	postgres)
		((${#PG_PRIVATE_DATA[@]} == 0)) || return 0 # pg_private_start set SHARD_DSNS
		if [[ -n "${BENCH_POSTGRES_SHARD_DSNS:-}" ]]; then
			read -r -a SHARD_DSNS <<<"$BENCH_POSTGRES_SHARD_DSNS"
		else
			SHARD_DSNS=("$HERALD_TEST_POSTGRES_DSN")
			if ((SHARDS > 1)) && [[ -n "${HERALD_TEST_POSTGRES18_DSN:-}" ]]; then
				SHARD_DSNS+=("$HERALD_TEST_POSTGRES18_DSN")
			fi
		fi
		((${#SHARD_DSNS[@]} >= SHARDS)) ||
			die "SHARDS=$SHARDS: only ${#SHARD_DSNS[@]} PostgreSQL clusters (set BENCH_POSTGRES_SHARD_DSNS)"
		;;
	redis)
		if ((SHARDS == 1)); then
			SHARD_ADDRS=("$HERALD_TEST_REDIS_ADDR")
			return
		fi
		command -v redis-server >/dev/null || die "SHARDS=$SHARDS with redis needs redis-server"
		local i
		for ((i = 0; i < SHARDS; i++)); do
			SHARD_ADDRS+=("127.0.0.1:$((BASE_PORT + 900 + i))")
			redis_shard_up "$i"
		done
		log "Redis shards: ${SHARD_ADDRS[*]} (pids ${SHARD_REDIS_PIDS[*]})"
		;;
	esac
}

# redis_shard_up I starts (again) the redis-server of Redis shard I (no
# persistence: a restarted shard comes back empty, as after a crash of a
# cache) and waits until it accepts connections.
redis_shard_up() {
	local i=$1 port=$((BASE_PORT + 900 + $1))
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is taken (another run?); set BASE_PORT to move the shards"
	fi
	redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no >>"$RUN/redis-shard$i.log" 2>&1 &
	SHARD_REDIS_PIDS[i]=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.05
	done
	die "Redis shard $i did not start on port $port (log: redis-shard$i.log)"
}

# pg_as runs a PostgreSQL server command as the postgres OS user when we
# are root (the server refuses to run as root).
pg_as() {
	if (($(id -u) == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pg_private_wanted reports whether the run starts PostgreSQL clusters of
# its own (PG_SHARD_CLUSTERS, see the header).
pg_private_wanted() {
	[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || die "SHARDS: want a positive integer, got $SHARDS"
	local given=2 dsns
	case "${PG_SHARD_CLUSTERS:-auto}" in
	private) return 0 ;;
	given) return 1 ;;
	auto)
		if [[ -n "${BENCH_POSTGRES_SHARD_DSNS:-}" ]]; then
			read -r -a dsns <<<"$BENCH_POSTGRES_SHARD_DSNS"
			given=${#dsns[@]}
		elif [[ -n "${BENCH_POSTGRES_DSN:-}" ]]; then
			given=1
			[[ -n "${HERALD_TEST_POSTGRES18_DSN:-}" ]] && given=2
		fi
		((SHARDS > given))
		;;
	*) die "PG_SHARD_CLUSTERS=$PG_SHARD_CLUSTERS: want auto, private or given" ;;
	esac
}

# pg_private_start makes SHARDS PostgreSQL clusters of the run's own (one
# initdb, copied), starts them and fills SHARD_DSNS. HERALD_TEST_POSTGRES_DSN
# becomes the first one's (scripts read it for probes).
pg_private_start() {
	local i port
	[[ -x "$PG_SHARD_BIN/initdb" && -x "$PG_SHARD_BIN/pg_ctl" ]] ||
		die "private PostgreSQL clusters need initdb and pg_ctl in PG_SHARD_BIN=$PG_SHARD_BIN"
	command -v psql >/dev/null || die "private PostgreSQL clusters need psql"
	PG_PRIVATE_BASE="$WORK/pg-$$"
	# The postgres user must reach the data (not so under a private home).
	if (($(id -u) == 0)) && ! runuser -u postgres -- test -x "$WORK" 2>/dev/null; then
		PG_PRIVATE_BASE=$(mktemp -d /var/tmp/herald-bench-pg.XXXXXX)
	fi
	rm -rf "$PG_PRIVATE_BASE"
	mkdir -p "$PG_PRIVATE_BASE"
	if (($(id -u) == 0)); then chown postgres: "$PG_PRIVATE_BASE"; fi
	log "PostgreSQL shards: initdb ($PG_SHARD_BIN) of $SHARDS private clusters"
	pg_as "$PG_SHARD_BIN/initdb" -D "$PG_PRIVATE_BASE/template" -U herald --auth=trust \
		--encoding=UTF8 --locale=C --no-sync >"$RUN/pg-initdb.log" 2>&1 </dev/null ||
		{ tail -n 20 "$RUN/pg-initdb.log" >&2; die "initdb failed"; }
	# The test services' settings (scripts/servicelib.sh): TCP on loopback
	# only, no socket folder; the rest (fsync, shared_buffers) the defaults.
	cat >>"$PG_PRIVATE_BASE/template/postgresql.conf" <<CONF

# herald bench/lib.sh private shard
listen_addresses = '127.0.0.1'
max_connections = $PG_SHARD_MAX_CONNECTIONS
unix_socket_directories = ''
CONF
	for ((i = 0; i < SHARDS; i++)); do
		port=$((BASE_PORT + 950 + i))
		PG_PRIVATE_DATA+=("$PG_PRIVATE_BASE/shard$i")
		cp -a "$PG_PRIVATE_BASE/template" "${PG_PRIVATE_DATA[i]}"
		echo "port = $port" >>"${PG_PRIVATE_DATA[i]}/postgresql.conf"
		pg_shard_up "$i"
		psql -X -q "postgres://herald@127.0.0.1:$port/postgres?sslmode=disable" -c "create database herald" >&2 ||
			die "PostgreSQL shard $i: could not create the herald database"
		SHARD_DSNS+=("postgres://herald@127.0.0.1:$port/herald?sslmode=disable")
	done
	rm -rf "$PG_PRIVATE_BASE/template"
	export HERALD_TEST_POSTGRES_DSN=${SHARD_DSNS[0]}
	log "PostgreSQL shards: ${SHARD_DSNS[*]}"
}

# pg_shard_up I starts (again) private cluster I and waits until it
# answers; pg_shard_down I stops it (fast: sessions are cut, as in a
# failover).
pg_shard_up() {
	local i=$1 port=$((BASE_PORT + 950 + $1))
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is taken (another run?); set BASE_PORT to move the shards"
	fi
	# The server's log stays beside the data (the postgres user may not
	# reach the results); stop_shards copies it into the run folder.
	local logf="$PG_PRIVATE_BASE/pg-shard$i.log"
	pg_as "$PG_SHARD_BIN/pg_ctl" -D "${PG_PRIVATE_DATA[i]}" -l "$logf" -w -t 60 start >/dev/null 2>&1 </dev/null ||
		{ tail -n 20 "$logf" >&2; die "PostgreSQL shard $i did not start"; }
}
pg_shard_down() {
	pg_as "$PG_SHARD_BIN/pg_ctl" -D "${PG_PRIVATE_DATA[$1]}" -m fast -w -t 60 stop >/dev/null 2>&1 </dev/null
}

# shard_stop I / shard_start I stop and start shard I of the run's own
# (a private PostgreSQL cluster or a Redis server the run started).
shard_stop() {
	if [[ "$ENGINE" == postgres ]]; then
		((${#PG_PRIVATE_DATA[@]} > $1)) || die "shard $1 is not a private cluster (PG_SHARD_CLUSTERS=private)"
		pg_shard_down "$1" || die "PostgreSQL shard $1 did not stop"
	else
		local pid=${SHARD_REDIS_PIDS[$1]:-}
		[[ -n "$pid" ]] || die "Redis shard $1 is not a server of this run (SHARDS above 1)"
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		unset 'SHARD_REDIS_PIDS[$1]'
	fi
}
shard_start() {
	if [[ "$ENGINE" == postgres ]]; then
		pg_shard_up "$1"
	else
		redis_shard_up "$1"
	fi
}

# stop_shards stops the Redis servers shards_prepare started (by pid) and
# the private PostgreSQL clusters, and deletes the clusters' data.
stop_shards() {
	local pid d
	for pid in "${SHARD_REDIS_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	SHARD_REDIS_PIDS=()
	for d in "${PG_PRIVATE_DATA[@]}"; do
		if [[ -s "$d/postmaster.pid" ]]; then
			pg_as "$PG_SHARD_BIN/pg_ctl" -D "$d" -m immediate -w -t 60 stop >/dev/null 2>&1 </dev/null || log "could not stop the PostgreSQL cluster in $d"
		fi
	done
	PG_PRIVATE_DATA=()
	if [[ -n "$PG_PRIVATE_BASE" ]]; then
		cp "$PG_PRIVATE_BASE"/pg-shard*.log "$RUN/" 2>/dev/null || true
		rm -rf "$PG_PRIVATE_BASE"
		PG_PRIVATE_BASE=""
	fi
}

# yaml_list ITEM...: a YAML flow list of quoted strings.
yaml_list() {
	local out="" x
	for x in "$@"; do
		out+="${out:+, }\"$x\""
	done
	echo "[$out]"
}

# engine_yaml prints the engine section of a node's configuration (the
# keys of server/engine.go: engine.postgres.shards and .schema,
# engine.redis.address and .prefix), with the first SHARDS_N shards.
engine_yaml() {
	case "$ENGINE" in
	memory) printf 'engine:\n  type: memory\n' ;;
	postgres) printf 'engine:\n  type: postgres\n  postgres:\n    shards: %s\n    schema: "%s"\n' \
		"$(yaml_list "${SHARD_DSNS[@]:0:$SHARDS_N}")" "$ENGINE_SCHEMA" ;;
	redis) printf 'engine:\n  type: redis\n  redis:\n    address: %s\n    prefix: "%s"\n' \
		"$(yaml_list "${SHARD_ADDRS[@]:0:$SHARDS_N}")" "$ENGINE_SCHEMA" ;;
	esac
}

# history_yaml prints the history options of the bench channels.
history_yaml() {
	if ((HISTORY > 0)); then
		printf '    history_size: %d\n    history_ttl: 5m\n    allow_recovery: true\n' "$HISTORY"
	fi
}

# engine_cleanup drops the run's PostgreSQL schema; the nodes have stopped.
# Redis keys under the run's prefix are left to their TTLs.
engine_cleanup() {
	local dsn
	if [[ "$ENGINE" == postgres ]] && command -v psql >/dev/null; then
		for dsn in "${SHARD_DSNS[@]:0:$SHARDS_N}"; do
			psql -q "$dsn" -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $ENGINE_SCHEMA CASCADE" >&2 ||
				log "could not drop schema $ENGINE_SCHEMA"
		done
	fi
}

# multi_node_engine reports whether nodes of this engine share publications.
multi_node_engine() { [[ "$ENGINE" != memory ]]; }

# node_port I / node_url I / node_api I: addresses of node I (from 1).
node_port() { echo $((BASE_PORT + $1)); }
node_url() { echo "ws://127.0.0.1:$(node_port "$1")/connection/websocket"; }
node_api() { echo "http://127.0.0.1:$(node_port "$1")/api"; }

# start_node I [EXTRA_YAML]: starts node I and waits until it answers.
start_node() {
	local i=$1 extra=${2:-} port cfg pid
	port=$(node_port "$i")
	cfg="$WORK/node$i.yaml"
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is taken (another run?); set BASE_PORT to move the nodes"
	fi
	cat >"$cfg" <<YAML
address: "127.0.0.1:$port"
name: "bench-node-$i"
log:
  level: $NODE_LOG_LEVEL
$(engine_yaml)
client:
  write_coalesce: "$WRITE_COALESCE"
  write_coalesce_off: $WRITE_COALESCE_OFF
  ping_interval: "$PING_INTERVAL"
  pong_timeout: "$PONG_TIMEOUT"
  token:
    hmac_secret_key: "$SECRET"
${NODE_CLIENT_YAML:-}
channel:
  without_namespace:
    allow_subscribe_for_client: true
    allow_publish_for_client: true
$(history_yaml)
${NODE_CHANNEL_YAML:-}
http_api:
  key: "$API_KEY"
websocket:
  # The load generator opens every connection from one address.
  ip_rate_limit: -1
  write_timeout: "${NODE_WRITE_TIMEOUT:-1s}"
shutdown:
  drain_window: 1s
  timeout: 10s
$extra
YAML
	# HERALD_SERVICES_* move the test services; herald serve would warn
	# that they name no configuration key.
	# NODE_GOMAXPROCS and NODE_CPUS (a taskset CPU list) size the nodes
	# alone, not the load tool.
	local -a pre=()
	[[ -n "${NODE_GOMAXPROCS:-}" ]] && pre+=(GOMAXPROCS="$NODE_GOMAXPROCS")
	# shellcheck disable=SC2206 # NODE_ENV is a list of NAME=VALUE words
	[[ -n "${NODE_ENV:-}" ]] && pre+=(${NODE_ENV})
	[[ -n "${NODE_CPUS:-}" ]] && pre+=(taskset -c "$NODE_CPUS")
	# NODE_CGROUP (a cgroup v1 folder) puts the node in that group.
	in_cgroup "${NODE_CGROUP:-}" env -u HERALD_SERVICES_PG_PORT -u HERALD_SERVICES_REDIS_PORT -u HERALD_SERVICES_NATS_PORT \
		"${pre[@]}" "$BIN" serve -c "$cfg" >"$RUN/node$i.log" 2>&1 &
	pid=$!
	NODE_PIDS+=("$pid")
	NODE_PORTS+=("$port")
	await_node "$i" "$pid" "http://127.0.0.1:$port/healthz" "node $i: pid $pid, port $port, engine $ENGINE"
}

# await_node I PID URL MESSAGE: waits up to 15 s until node I (process
# PID) answers URL, then logs MESSAGE; dies with the end of its log when
# it exits or does not answer.
await_node() {
	local i=$1 pid=$2 url=$3 msg=$4
	for _ in $(seq 150); do
		if curl -fsS "$url" >/dev/null 2>&1; then
			log "$msg"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 20 "$RUN/node$i.log" >&2
	die "node $i did not start"
}

# in_cgroup CGROUP CMD...: runs CMD in the cgroup v1 folder CGROUP (none
# when empty) as this process (exec): run it in the background (&), and
# $! is CMD's pid.
in_cgroup() {
	local cg=$1
	shift
	if [[ -n "$cg" ]]; then
		echo "$BASHPID" >"$cg/cgroup.procs"
	fi
	exec "$@"
}

# node_pids: the started nodes' pids, comma-separated (for --server-pid).
node_pids() {
	local IFS=,
	echo "${NODE_PIDS[*]}"
}

# stop_all keeps each node's Herald metrics (disconnects by code, engine
# counters, the write coalescing interval) and the Go scheduler's latency
# histogram (how long goroutines waited for a CPU) in nodeI.metrics.txt,
# then stops the nodes this run started (by pid), gracefully first.
stop_all() {
	local pid i
	if [[ -n "${SAMPLER_PID:-}" ]]; then
		kill "$SAMPLER_PID" 2>/dev/null || true
		SAMPLER_PID=
	fi
	if [[ -n "${TOP_PID:-}" ]]; then
		kill "$TOP_PID" 2>/dev/null || true
		TOP_PID=
	fi
	for i in "${!NODE_PORTS[@]}"; do
		curl -fsS --max-time 5 "http://127.0.0.1:${NODE_PORTS[$i]}/metrics" 2>/dev/null |
			grep -E '^(herald_|go_sched_latencies_seconds)' >"$RUN/node$((i + 1)).metrics.txt" || true
	done
	for pid in "${NODE_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${NODE_PIDS[@]}"; do
		for _ in $(seq 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if ((${#NODE_PIDS[@]} > 0)); then
		engine_cleanup
	fi
	NODE_PIDS=()
	NODE_PORTS=()
}

describe_machine() {
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel: $(uname -srm)"
	echo "cpu: $(nproc) × $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "memory: $(free -g | awk '/^Mem:/{print $2}') GiB"
	echo "open files: soft $(ulimit -Sn), hard $(ulimit -Hn)"
	echo "ephemeral ports: $(cat /proc/sys/net/ipv4/ip_local_port_range | tr '\t' '-')"
	echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "go: $(go version | cut -d' ' -f3-)"
	echo "herald: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)$(cd "$ROOT" && git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "engine: $ENGINE, client format: $FORMAT, history_size: $HISTORY, write_coalesce: $WRITE_COALESCE (off: $WRITE_COALESCE_OFF), ping_interval: $PING_INTERVAL, pong_timeout: $PONG_TIMEOUT"
}

# sample_kernel: samples the kernel's socket counts and memory
# (/proc/net/sockstat, /proc/meminfo) every 5 s into $RUN/kernel.tsv until the
# run ends, so the peak is on record: TCP sockets in use, their buffer pages,
# and slab memory (where the kernel keeps its socket structures).
sample_kernel() {
	(
		printf 'time\ttcp_inuse\ttcp_mem_pages\tslab_kib\tsunreclaim_kib\tmem_available_kib\n'
		while :; do
			awk -v t="$(date +%H:%M:%S)" '
				FILENAME ~ /sockstat/ && $1 == "TCP:" { inuse = $3; mem = $11 }
				FILENAME ~ /meminfo/ && $1 == "Slab:" { slab = $2 }
				FILENAME ~ /meminfo/ && $1 == "SUnreclaim:" { sunr = $2 }
				FILENAME ~ /meminfo/ && $1 == "MemAvailable:" { avail = $2 }
				END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", t, inuse, mem, slab, sunr, avail }
			' /proc/net/sockstat /proc/meminfo
			sleep 5
		done
	) >"$RUN/kernel.tsv" &
	SAMPLER_PID=$!
}

# sample_processes: every 5 s for at most MAX seconds (600), the machine's
# CPU lines and its eight busiest processes over those 5 s, into
# $RUN/top.txt: what else took the CPUs while a run measured (the
# overload step of the test command runs after every other step).
sample_processes() {
	local max=${1:-600}
	top -b -d 5 -n $((max / 5)) -w 200 -o %CPU 2>/dev/null |
		awk '/^top -/ { n = 0; print; next } /^%Cpu/ { print; next } /^ *PID/ { n = 1; print; next } n && n++ <= 8' >"$RUN/top.txt" &
	# The pipeline's last process: stop_all kills it, and top ends at its
	# next write.
	TOP_PID=$!
}

# kernel_peak prints the peak of kernel.tsv against its first line.
kernel_peak() {
	awk -F'\t' 'NR == 2 { s0 = $4; a0 = $6 }
		NR > 1 && $2 + 0 > tcp { tcp = $2; pages = $3; slab = $4; avail = $6 }
		END { printf "kernel at the peak: %d TCP sockets in use, %d pages of TCP buffers, slab %.0f MiB (+%.0f MiB), MemAvailable %.0f MiB (%+.0f MiB)\n",
			tcp, pages, slab / 1024, (slab - s0) / 1024, avail / 1024, (avail - a0) / 1024 }' "$RUN/kernel.tsv"
}

# cpu_sample prints the machine's CPU counters from /proc/stat's first
# line: busy (user, nice, system, irq, softirq), steal (time the
# hypervisor gave this machine's CPUs to others) and total, in ticks.
cpu_sample() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}

# settle waits until the machine is quiet before a measurement: until one
# second passes in which the CPUs were busy less than SETTLE_BELOW of their
# time (0.05: 5%), or SETTLE_MAX has passed. A point that follows a
# PostgreSQL or Redis point otherwise begins while those servers still
# write out what the last one left (checkpoints, autovacuum, the outbox's
# cleanup), which the one-minute load average, lagging by a minute, does
# not show. Prints "busy <share> steal <share> waited <s>s" of the last
# second, for the point's meta.json: the steal share is the hypervisor's
# other guests, which no waiting here removes.
SETTLE_BELOW=${SETTLE_BELOW:-0.05}
SETTLE_MAX=${SETTLE_MAX:-60}
settle() {
	local start=$SECONDS b0 s0 t0 b1 s1 t1 share steal quiet
	while :; do
		read -r b0 s0 t0 < <(cpu_sample)
		sleep 1
		read -r b1 s1 t1 < <(cpu_sample)
		# The shares of the second, and 1 when it was quiet.
		read -r share steal quiet < <(awk -v b=$((b1 - b0)) -v s=$((s1 - s0)) -v t=$((t1 - t0)) -v lim="$SETTLE_BELOW" \
			'BEGIN { if (t <= 0) t = 1; printf "%.3f %.3f %d\n", b / t, s / t, b / t < lim }')
		((quiet || SECONDS - start >= SETTLE_MAX)) && break
	done
	echo "busy $share steal $steal waited $((SECONDS - start))s"
}

# record_command CMD...: logs the exact command into the results, then runs it.
record_command() {
	printf '%q ' "$@" | sed "s|$ROOT/||g" >>"$RUN/commands.txt"
	echo >>"$RUN/commands.txt"
	"$@"
}
