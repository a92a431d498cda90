# Centrifugo beside Herald, for the bench/*.sh scenarios that compare the
# two: build Centrifugo from its public Go module, start its nodes on the
# ports lib.sh gives Herald's (one server runs at a time), with the
# engine of ENGINE. Source it after lib.sh.
#
# Environment:
#   CF_VERSION=v6.9.1      Centrifugo, built into .tmp/centrifugo-<version>/ once
#   CF_PG_NOTIFY=false     broker.postgres.use_notify with ENGINE=postgres (false: Centrifugo's
#                          default, the outbox is polled every 100 ms)
#   CF_NAMESPACES_JSON=    channel.namespaces of the nodes, a JSON list (set by scripts)
#   CF_EXTRA_JSON=         more top-level keys of the nodes' file, e.g. "proxies": [...] (set by scripts)
#   CF_GOMAXPROCS=         the nodes' GOMAXPROCS (unset: automaxprocs decides)

CF_VERSION=${CF_VERSION:-v6.9.1}
CF_PG_NOTIFY=${CF_PG_NOTIFY:-false}
CF_BIN="$ROOT/.tmp/centrifugo-$CF_VERSION/centrifugo"
CF_SCHEMAS=()

# cf_build installs Centrifugo from its public Go module once; later runs
# reuse the binary.
cf_build() {
	if [[ -x "$CF_BIN" ]]; then
		return
	fi
	log "building Centrifugo $CF_VERSION from its Go module into ${CF_BIN#"$ROOT"/}"
	# The flags of Centrifugo's release builds (its .goreleaser.yml): no
	# symbol table, and the version set, so that it does not run as a
	# development build.
	(cd "$ROOT/.tmp" && GOBIN=$(dirname "$CF_BIN") go install \
		-ldflags "-s -w -X github.com/centrifugal/centrifugo/v6/internal/build.Version=${CF_VERSION#v}" \
		"github.com/centrifugal/centrifugo/v6@$CF_VERSION") ||
		die "go install github.com/centrifugal/centrifugo/v6@$CF_VERSION failed"
}

# cf_engine_json prints Centrifugo's engine or broker section for ENGINE;
# for PostgreSQL it makes the run's schema (search_path of the DSN).
cf_engine_json() {
	case "$ENGINE" in
	memory) echo '"engine": {"type": "memory"}' ;;
	redis) printf '"engine": {"type": "redis", "redis": {"address": ["redis://%s"], "prefix": "cf_bench_%s"}}\n' \
		"${SHARD_ADDRS[0]}" "$$" ;;
	postgres)
		local schema="cf_bench_$$" dsn=${SHARD_DSNS[0]} sep='?'
		[[ "$dsn" == *\?* ]] && sep='&'
		printf '"broker": {"enabled": true, "type": "postgres", "postgres": {"dsn": "%s%ssearch_path=%s", "use_notify": %s}}\n' \
			"$dsn" "$sep" "$schema" "$CF_PG_NOTIFY"
		;;
	esac
}

# cf_schema_make creates the run's Centrifugo schema (once).
cf_schema_make() {
	local schema="cf_bench_$$"
	[[ "$ENGINE" == postgres ]] || return 0
	((${#CF_SCHEMAS[@]} == 0)) || return 0
	psql -X -q "${SHARD_DSNS[0]}" -c "CREATE SCHEMA IF NOT EXISTS $schema" >&2 || die "could not create schema $schema"
	CF_SCHEMAS+=("${SHARD_DSNS[0]}")
}

cf_schema_drop() {
	local dsn
	for dsn in "${CF_SCHEMAS[@]}"; do
		psql -X -q "$dsn" -c "SET client_min_messages = warning; DROP SCHEMA IF EXISTS cf_bench_$$ CASCADE" >&2 ||
			log "could not drop schema cf_bench_$$"
	done
	CF_SCHEMAS=()
}

# start_cf_node I [CGROUP]: starts Centrifugo node I on node_port I and
# waits for its health endpoint.
start_cf_node() {
	local i=$1 cg=${2:-} port cfg pid
	port=$(node_port "$i")
	cfg="$WORK/cf-node$i.json"
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "port $port is taken (another run?); set BASE_PORT to move the nodes"
	fi
	cf_schema_make
	local ns="" extra=""
	[[ -n "${CF_NAMESPACES_JSON:-}" ]] && ns=", \"namespaces\": $CF_NAMESPACES_JSON"
	[[ -n "${CF_EXTRA_JSON:-}" ]] && extra="$CF_EXTRA_JSON,"
	cat >"$cfg" <<JSON
{
  "http_server": {"address": "127.0.0.1", "port": $port},
  "log": {"level": "warn"},
  "node": {"name": "cf-bench-node-$i"},
  "client": {"token": {"hmac_secret_key": "$SECRET"}, "allowed_origins": ["*"]},
  "channel": {"without_namespace": {"allow_subscribe_for_client": true, "allow_publish_for_client": true}$ns},
  "http_api": {"key": "$API_KEY"},
  "health": {"enabled": true},
  "usage_stats": {"disabled": true},
  $extra
  $(cf_engine_json)
}
JSON
	local -a pre=()
	[[ -n "${CF_GOMAXPROCS:-}" ]] && pre+=(env GOMAXPROCS="$CF_GOMAXPROCS")
	in_cgroup "$cg" "${pre[@]}" "$CF_BIN" --config "$cfg" >"$RUN/node$i.log" 2>&1 &
	pid=$!
	NODE_PIDS+=("$pid")
	NODE_PORTS+=("$port")
	await_node "$i" "$pid" "http://127.0.0.1:$port/health" "centrifugo node $i: pid $pid, port $port, engine $ENGINE${cg:+, cgroup $cg}"
}

# The servers server_order accepts; a script that starts more (bench/sidebyside.sh:
# the floor) adds them after sourcing this file.
SERVERS_KNOWN=(herald centrifugo)

# server_order RUN SERVER...: sets ORDER to the servers, reversed in even
# runs, so that neither always runs on the warmer (or more tired) machine;
# dies on a server not in SERVERS_KNOWN.
server_order() {
	local run=$1 k
	shift
	local -a s=("$@")
	for k in "${s[@]}"; do
		[[ " ${SERVERS_KNOWN[*]} " == *" $k "* ]] || die "server $k: want one of ${SERVERS_KNOWN[*]}"
	done
	ORDER=("${s[@]}")
	if ((run % 2 == 0)); then
		ORDER=()
		for ((k = ${#s[@]} - 1; k >= 0; k--)); do ORDER+=("${s[k]}"); done
	fi
}

# bench_sdk_build rebuilds herald-bench with the centrifuge-go client
# when CLIENT=sdk (bench/loadgen/sdk.go says why it is not built in by
# default).
bench_sdk_build() {
	[[ "${CLIENT:-}" == sdk ]] || return 0
	log "building herald-bench with the centrifuge-go client (-tags benchsdk)"
	(cd "$ROOT/bench" && go build -tags benchsdk \
		-ldflags=-X=google.golang.org/protobuf/reflect/protoregistry.conflictPolicy=warn -o "$BENCH" ./cmd/herald-bench)
}

# cf_prepare builds Centrifugo (and herald-bench with the SDK when
# CLIENT=sdk) and adds Centrifugo's version to the run's machine.txt.
cf_prepare() {
	cf_build
	bench_sdk_build
	"$CF_BIN" version >>"$RUN/machine.txt"
}

# each_point FN: calls FN SERVER RUN for every run of RUNS and every
# server of SERVERS, in server_order.
each_point() {
	local fn=$1 run server
	local -a servers
	read -r -a servers <<<"$SERVERS"
	for ((run = 1; run <= RUNS; run++)); do
		server_order "$run" "${servers[@]}"
		for server in "${ORDER[@]}"; do
			"$fn" "$server" "$run"
		done
	done
}

# point_start SERVER RUN WHAT [HERALD_EXTRA_YAML]: makes the point's folder
# (POINT_DIR, points/SERVER-runRUN), logs WHAT and starts node 1 of SERVER.
point_start() {
	local server=$1 run=$2 what=$3 extra=${4:-}
	POINT_DIR="$RUN/points/$server-run$run"
	mkdir -p "$POINT_DIR"
	log "point: $server, run $run, $what"
	if [[ "$server" == centrifugo ]]; then
		start_cf_node 1
	else
		start_node 1 "$extra"
	fi
}
