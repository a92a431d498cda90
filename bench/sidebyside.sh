#!/usr/bin/env bash
# Side by side with Centrifugo: the PostgreSignalR workload (500 subscribers
# of one channel, 128-byte publications through the server API of node 1,
# rising rates, 5 s per rate) against Herald and against Centrifugo in the
# same run, with the same probe and heavy clients, the two servers taking
# turns point by point. Every point: one server, one engine, one
# condition, one run. The run folder gets points/<server>-<engine>-<condition>-run<k>/
# (latency.csv, latency.md, meta.json, node logs, cgroups.txt: each node's
# cpu group and, under the quota, its throttling), table.md, the
# Markdown table of medians docs/benchmarks.md carries, and chart.png, the
# same medians drawn (bench/cmd/sidebyside-table).
#
#   bench/sidebyside.sh                    every engine and condition, RUNS=3 (see the duration below)
#   ENGINES=memory CONDITIONS=plain RUNS=1 RATES=200,400 STEP=2s WARMUP=1s SUBSCRIBERS=20 bench/sidebyside.sh   smoke
#
# Environment (and lib.sh's: FORMAT, BASE_PORT, RESULTS, ...):
#   ENGINES="memory redis postgres"  memory: one node; redis and postgres: 2 nodes,
#                              publications into node 1, subscribers on node 2.
#                              Centrifugo: engine.type redis on the same Redis; for
#                              PostgreSQL its PostgreSQL stream broker (broker.type
#                              postgres, v6.9.1's configtypes.Broker) on the same
#                              cluster, in a schema of the run's own
#   NODES=2                    nodes of a networked engine (redis, postgres); 1 puts the
#                              publisher and the subscribers on one node, to tell what the
#                              engine's own round trip costs from what a second node costs
#   CONDITIONS="plain quota busy"  plain; quota: each node in a cgroup v1 cpu group of
#                              its own with cpu.cfs_quota_us = QUOTA_CPUS × the period
#                              (as a container limit does); busy: beside BUSY_PROCS
#                              busy loops (taskset to BUSY_CPU when set), started and
#                              stopped with the point
#   SERVERS="herald centrifugo"  the servers (herald, centrifugo, floor: see below); their
#                              order alternates from run to run
#   RUNS=3                     runs of every point (the table shows medians)
#   RATES=200,400,600,800,1000,1200,1500,2000,2500,3000,4000  STEP=5s WARMUP=3s SUBSCRIBERS=500
#   P99_LIMIT=2s               a sweep stops after a step whose all-copies p99 is above it;
#                              "served" is herald-bench throughput's pass rule with this
#                              limit (no copy missing, no publish error, achieved ≥ 95%)
#   SETTLE_BELOW=0.05 SETTLE_MAX=60  before each point the script waits (at most SETTLE_MAX
#                              seconds) for a second in which the CPUs were busy less than
#                              SETTLE_BELOW of their time (lib.sh's settle); meta.json
#                              records that second's busy and steal shares and the wait
#   CLIENT=heavy               herald-bench --client: light, heavy or sdk (centrifuge-go;
#                              the script then builds herald-bench with -tags benchsdk)
#   FORMAT=json                the subscribers' protocol (JSON, as browsers speak)
#   QUOTA_CPUS=1 BUSY_PROCS=1 BUSY_CPU=
#   QUOTA_GOMAXPROCS=          GOMAXPROCS of every server's nodes under the quota (empty:
#                              each chooses: Go's runtime follows a cgroup v1 or v2 quota
#                              but never goes below 2, so Herald and the floor run 2 under
#                              a 1-CPU quota on this 2-core machine; Centrifugo calls
#                              automaxprocs, which sets 1). gomaxprocs.txt of each
#                              Herald point says what it ran with
#   CF_VERSION=v6.9.1          Centrifugo, built from its Go module into .tmp/centrifugo-<version>/
#   CF_PG_NOTIFY=false         Centrifugo's broker.postgres.use_notify (false: its default,
#                              the outbox is polled every 100 ms)
#   FLOOR_WRITERS=2            the floor's writer goroutines (its -writers)
#   FLOOR_INTERVALS="0 1ms 2ms"  the floor's round intervals (its -round-interval): a
#                              floor point per interval, condition and run. The
#                              round-by-round floor (0) is no bound at the middle rates,
#                              where one that coalesces at a fixed interval gets far
#                              less; the table's floor columns and its † marks take the
#                              best of them at each rate (docs/benchmarks.md, "A floor
#                              that coalesces")
#   FLOOR_ARGS=                more flags for the floor, e.g. "-write-timeout 1s" for a write
#                              deadline per write as Herald's websocket.write_timeout sets
#   FLOOR_REDIS=1              with the redis engine (and NODES=2), also the floor of two
#                              nodes on Redis: two floors on the run's Redis (their -redis),
#                              the API on one and the subscribers on the other, as the
#                              servers' nodes are (points/floor[-<interval>]-redis-…); 0: not
#
# The floor (SERVERS="herald centrifugo floor"): bench/floor, a server on
# Herald's connection layer that answers connect and subscribe with canned
# replies and writes each API publication, encoded once, to every
# subscriber from FLOOR_WRITERS goroutines (bench/floor/doc.go; the flags
# of bench/floor.sh's latency scenario), measured with the same probe,
# sweep and condition as the servers (quota: in a cpu group of its own as
# a node is; busy: beside the busy loops): a reference for the servers'
# figures, not a lower bound (a server can do better than each of its
# rounds). It runs once per round interval of FLOOR_INTERVALS: round by
# round (0) and coalescing at fixed intervals, which the middle rates need.
# It is one process with no engine, so it does not run once per engine: it
# runs once per interval, condition and run, while the first engine of
# ENGINES runs, and its points are labelled engine "none"
# (points/floor-none-<condition>-run<k>/ round by round,
# points/floor-<interval>-none-<condition>-run<k>/ at an interval; its log
# node1.log, its counters at exit node1.stats.json); the table gives it a
# column per condition of its own, with the best interval's median at each
# rate. Its WebSocket listens on node 1's port, its server API on node 2's.
# With the redis engine (and NODES=2; FLOOR_REDIS=0 leaves it out) the
# floor also runs as two floors that relay through the run's Redis (the
# API on floor 1, the subscribers on floor 2: the path of the servers'
# nodes in the Redis columns; bench/floor/relay.go), once per interval,
# condition and run while the redis engine runs, labelled engine "redis"
# (points/floor[-<interval>]-redis-<condition>-run<k>/; floor I listens on
# node 2I-1's port, its API on node 2I's); the table gives it columns of
# its own, and the Redis columns' † marks are against it.
#
# Duration: each point takes about 15 s to start and stop plus WARMUP plus
# (STEP + 2 s) per rate it reaches; with the defaults a point is at most
# about 90 s, so 3 engines × 3 conditions × 2 servers × 3 runs is at most
# about 80 minutes (less: sweeps stop where a server stops serving); the
# floor adds 3 intervals × 3 conditions × 3 runs, at most about 40 minutes
# (about 27 with the sweeps' usual ends).
FORMAT=${FORMAT:-json}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"
SERVERS_KNOWN+=(floor)

ENGINES=${ENGINES:-memory redis postgres}
CONDITIONS=${CONDITIONS:-plain quota busy}
SERVERS=${SERVERS:-herald centrifugo}
RUNS=${RUNS:-3}
RATES=${RATES:-200,400,600,800,1000,1200,1500,2000,2500,3000,4000}
STEP=${STEP:-5s}
WARMUP=${WARMUP:-3s}
SUBSCRIBERS=${SUBSCRIBERS:-500}
NODES=${NODES:-2}
[[ "$NODES" == 1 || "$NODES" == 2 ]] || die "NODES=$NODES: want 1 or 2"
P99_LIMIT=${P99_LIMIT:-2s}
CLIENT=${CLIENT:-heavy}
QUOTA_CPUS=${QUOTA_CPUS:-1}
BUSY_PROCS=${BUSY_PROCS:-1}
BUSY_CPU=${BUSY_CPU:-}
QUOTA_GOMAXPROCS=${QUOTA_GOMAXPROCS:-}
FLOOR_WRITERS=${FLOOR_WRITERS:-2}
FLOOR_INTERVALS=${FLOOR_INTERVALS:-0 1ms 2ms}
FLOOR_INTERVAL=0
FLOOR_ENGINE=none
FLOOR_REDIS=${FLOOR_REDIS:-1}
FLOOR="$ROOT/.tmp/bin/floor"
CGROUP_CPU=/sys/fs/cgroup/cpu
TABLE="$ROOT/.tmp/bin/sidebyside-table"

[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$FLOOR_WRITERS" =~ ^[1-9][0-9]*$ ]] || die "FLOOR_WRITERS=$FLOOR_WRITERS: want a positive integer"
for iv in $FLOOR_INTERVALS; do
	[[ "$iv" =~ ^(0|[0-9]+(\.[0-9]+)?(us|ms|s))$ ]] || die "FLOOR_INTERVALS: $iv: want 0 or a duration such as 500us, 1ms or 2ms"
done
[[ -n "${FLOOR_INTERVALS// /}" ]] || die "FLOOR_INTERVALS is empty: want 0, or intervals such as \"0 1ms 2ms\""
secs() { # secs 5s|1.5s|200ms -> whole seconds, rounded up
	awk -v d="$1" 'BEGIN { if (d ~ /ms$/) v = d / 1000; else v = d + 0; printf "%d\n", v == int(v) ? v : int(v) + 1 }'
}
n_rates=$(tr ',' '\n' <<<"$RATES" | grep -c .)
# The bound of one sweep: setup, warm-up, every step with its grace, and a margin.
POINT_LIMIT=$((120 + $(secs "$WARMUP") + n_rates * ($(secs "$STEP") + 3) + 30))

BUSY_PIDS=()
CGROUPS=()
CG=""

# cgroup_make I: makes a cgroup v1 cpu group of the run's own for node I,
# with the quota, and sets CG to its folder.
cgroup_make() {
	local dir="$CGROUP_CPU/herald-bench-$$-node$1" period
	[[ -w "$CGROUP_CPU" ]] || die "CONDITIONS=quota needs a writable cgroup v1 cpu controller at $CGROUP_CPU (root)"
	mkdir -p "$dir"
	CGROUPS+=("$dir")
	period=$(cat "$dir/cpu.cfs_period_us")
	awk -v q="$QUOTA_CPUS" -v p="$period" 'BEGIN { printf "%d\n", q * p }' >"$dir/cpu.cfs_quota_us"
	CG=$dir
}

# cgroups_stat DIR: appends each group's CPU throttling over the point
# (cgroup v1 cpu.stat: periods, periods in which the quota ran out, and
# the time its processes waited for the next period) to DIR/cgroups.txt.
cgroups_stat() {
	local d
	for d in "${CGROUPS[@]}"; do
		awk -v g="${d##*/}" '{ v[$1] = $2 } END { printf "%s: nr_periods %d, nr_throttled %d, throttled_time %.1f ms\n", g, v["nr_periods"], v["nr_throttled"], v["throttled_time"] / 1e6 }' \
			"$d/cpu.stat" >>"$1/cgroups.txt" 2>/dev/null || true
	done
}

# cgroups_remove removes the run's groups (empty once their nodes stopped).
cgroups_remove() {
	local d
	for d in "${CGROUPS[@]}"; do
		rmdir "$d" 2>/dev/null || log "could not remove $d (a process still in it?)"
	done
	CGROUPS=()
}

# busy_start starts the busy neighbours, each bounded by the point's limit.
busy_start() {
	local i
	local -a pin=()
	[[ -n "$BUSY_CPU" ]] && pin=(taskset -c "$BUSY_CPU")
	for ((i = 0; i < BUSY_PROCS; i++)); do
		"${pin[@]}" timeout "$POINT_LIMIT" sh -c 'while :; do :; done' &
		BUSY_PIDS+=($!)
	done
	log "busy neighbours: pids ${BUSY_PIDS[*]}${BUSY_CPU:+ on CPU $BUSY_CPU}"
}

busy_stop() {
	local pid
	for pid in "${BUSY_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	BUSY_PIDS=()
}

# start_server SERVER I CONDITION: starts node I of SERVER.
start_server() {
	local server=$1 i=$2 condition=$3 procs=""
	CG=""
	if [[ "$condition" == quota ]]; then
		cgroup_make "$i"
		procs=$QUOTA_GOMAXPROCS
	fi
	case "$server" in
	centrifugo) CF_GOMAXPROCS=$procs start_cf_node "$i" "$CG" ;;
	floor) start_floor "$i" "$CG" "$procs" ;;
	*) NODE_CGROUP=$CG NODE_GOMAXPROCS=${procs:-${NODE_GOMAXPROCS:-}} start_node "$i" ;;
	esac
}

# floor_api I / floor_url I: floor I's server API and WebSocket (floor I
# listens on node 2I-1's port, its API on node 2I's).
floor_api() { echo "http://127.0.0.1:$(node_port $((2 * $1)))/api"; }
floor_url() { echo "ws://127.0.0.1:$(node_port $((2 * $1 - 1)))/connection/websocket"; }

# start_floor I CGROUP GOMAXPROCS: starts floor I (in CGROUP, with
# GOMAXPROCS, when set; relaying through the run's Redis when FLOOR_ENGINE
# is redis) and waits until its API answers. Its counters at exit go to
# nodeI.stats.json, its log to nodeI.log.
start_floor() {
	local i=$1 cg=$2 procs=$3 port api p pid
	port=$(node_port $((2 * i - 1)))
	api=$(node_port $((2 * i)))
	for p in "$port" "$api"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			die "port $p is taken (another run?); set BASE_PORT to move the nodes"
		fi
	done
	local -a cmd=("$FLOOR" -addr "127.0.0.1:$port" -api-addr "127.0.0.1:$api" -api-key "$API_KEY" -writers "$FLOOR_WRITERS"
		-round-interval "$FLOOR_INTERVAL")
	[[ "$FLOOR_ENGINE" == redis ]] && cmd+=(-redis "${SHARD_ADDRS[0]}" -redis-prefix "floor_$ENGINE_SCHEMA.")
	# shellcheck disable=SC2206 # FLOOR_ARGS is a list of flags
	cmd+=(${FLOOR_ARGS:-})
	printf '%q ' "${cmd[@]}" | sed "s|$ROOT/||g" >>"$RUN/commands.txt"
	echo "&" >>"$RUN/commands.txt"
	local -a pre=()
	[[ -n "$procs" ]] && pre+=(env GOMAXPROCS="$procs")
	in_cgroup "$cg" "${pre[@]}" "${cmd[@]}" >"$RUN/node$i.stats.json" 2>"$RUN/node$i.log" &
	pid=$!
	NODE_PIDS+=("$pid")
	local via=""
	[[ "$FLOOR_ENGINE" == redis ]] && via=", through Redis"
	await_node "$i" "$pid" "http://127.0.0.1:$api/healthz" "floor $i: pid $pid, port $port, API on port $api, $FLOOR_WRITERS writer(s), round interval $FLOOR_INTERVAL${cg:+, cgroup $cg}$via"
}

# point SERVER CONDITION RUN: one sweep of the current ENGINE (the floor:
# of FLOOR_ENGINE, "none" for one process, "redis" for two that relay
# through Redis).
point() {
	local server=$1 condition=$2 run=$3 dir sub_node=1 code=0 engine=$ENGINE api url extra=""
	api=$(node_api 1)
	local variant=""
	if [[ "$server" == floor ]]; then
		engine=$FLOOR_ENGINE api=$(floor_api 1)
		extra=",\"floor_writers\":$FLOOR_WRITERS,\"floor_round_interval\":\"$FLOOR_INTERVAL\""
		[[ "$FLOOR_INTERVAL" == 0 ]] || variant="-$FLOOR_INTERVAL"
	fi
	dir="$RUN/points/$server$variant-$engine-$condition-run$run"
	mkdir -p "$dir"
	local quiet busy_share steal_share waited
	quiet=$(settle)
	read -r _ busy_share _ steal_share _ waited <<<"$quiet"
	log "point: $server${variant:+ (round interval $FLOOR_INTERVAL)}, engine $engine, $condition, run $run (machine before it: $quiet)"
	start_server "$server" 1 "$condition"
	if [[ "$server" == floor ]]; then
		if [[ "$engine" == redis ]]; then
			start_server floor 2 "$condition"
			sub_node=2 extra+=",\"nodes\":2"
		fi
		url=$(floor_url $sub_node)
	else
		if multi_node_engine && ((NODES > 1)); then
			start_server "$server" 2 "$condition"
			sub_node=2
		fi
		url=$(node_url $sub_node) extra=",\"nodes\":$sub_node"
	fi
	gomaxprocs_note "$server" "$dir"
	local pid
	for pid in "${NODE_PIDS[@]}"; do
		echo "pid $pid: $(grep -m1 ':cpu:' "/proc/$pid/cgroup" 2>/dev/null)" >>"$dir/cgroups.txt"
	done
	[[ "$condition" == busy ]] && busy_start
	printf '{"server":"%s","engine":"%s","condition":"%s","run":%d,"client":"%s","format":"%s","subscribers":%d,"step":"%s","p99_limit":"%s","quota_cpus":"%s","busy_procs":%d,"busy_cpu":"%s","load_before":"%s","cpu_busy_before":%s,"cpu_steal_before":%s,"settled_after":"%s"%s}\n' \
		"$server" "$engine" "$condition" "$run" "$CLIENT" "$FORMAT" "$SUBSCRIBERS" "$STEP" "$P99_LIMIT" "$QUOTA_CPUS" "$BUSY_PROCS" "$BUSY_CPU" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "$busy_share" "$steal_share" "$waited" "$extra" >"$dir/meta.json"
	record_command timeout --signal=INT --kill-after=30 "$POINT_LIMIT" "$BENCH" latency --client "$CLIENT" \
		--url "$url" --secret "$SECRET" --format "$FORMAT" \
		--subscribers "$SUBSCRIBERS" --channel psr \
		--api "$api" --api-key "$API_KEY" --api-conns 8 \
		--payload 128 --rates "$RATES" --step "$STEP" --down=false --p99-limit "$P99_LIMIT" --warmup "$WARMUP" \
		--server-pid "$(node_pids)" --csv "$dir/latency.csv" >"$dir/latency.md" 2>"$dir/bench.log" || code=$?
	((code == 0)) || log "herald-bench exited with $code (see ${dir#"$ROOT"/}/bench.log)"
	busy_stop
	cgroups_stat "$dir"
	stop_all
	cgroups_remove
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$RUN"/node*.stats.json "$dir/" 2>/dev/null || true
}

# gomaxprocs_note records the GOMAXPROCS a Herald node chose (the Go
# runtime follows a cgroup quota by itself since Go 1.25): from its
# metrics, when the Go collector exports it.
gomaxprocs_note() {
	local server=$1 dir=$2 port
	[[ "$server" == herald ]] || return 0
	for port in "${NODE_PORTS[@]}"; do
		curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" 2>/dev/null |
			awk -v p="$port" '/^go_sched_gomaxprocs_threads / { print "node on port " p ": GOMAXPROCS " $2 }' >>"$dir/gomaxprocs.txt" || true
	done
}

cleanup_sidebyside() {
	busy_stop
	stop_all
	cgroups_remove
	cf_schema_drop
	stop_shards
}

start_run sidebyside
trap cleanup_sidebyside EXIT
cf_prepare
log "building the table generator"
(cd "$ROOT/bench" && go build -o "$TABLE" ./cmd/sidebyside-table)
read -r -a servers <<<"$SERVERS"
if [[ " ${servers[*]} " == *" floor "* ]]; then
	log "building the floor server"
	(cd "$ROOT/bench" && go build -o "$FLOOR" ./floor)
	echo "floor: bench/floor, $FLOOR_WRITERS writer(s), round intervals $FLOOR_INTERVALS${FLOOR_ARGS:+, $FLOOR_ARGS}" >>"$RUN/machine.txt"
fi
echo "client: $CLIENT, subscribers: $SUBSCRIBERS, rates: $RATES, step: $STEP, warm-up: $WARMUP, p99 limit: $P99_LIMIT, runs: $RUNS" >>"$RUN/machine.txt"
echo "conditions: $CONDITIONS (quota $QUOTA_CPUS CPU per node; busy: $BUSY_PROCS loop(s)${BUSY_CPU:+ on CPU $BUSY_CPU})" >>"$RUN/machine.txt"

read -r -a engines <<<"$ENGINES"
for ((run = 1; run <= RUNS; run++)); do
	server_order "$run" "${servers[@]}"
	for engine in "${engines[@]}"; do
		ENGINE=$engine
		engine_prepare
		for condition in $CONDITIONS; do
			case "$condition" in plain | quota | busy) ;; *) die "condition $condition: want plain, quota or busy" ;; esac
			for server in "${ORDER[@]}"; do
				# The floor has no engine: once per condition and run (and
				# round interval).
				# With the redis engine, also two floors relaying through
				# its Redis.
				if [[ "$server" == floor ]]; then
					if [[ "$engine" == "${engines[0]}" ]]; then
						for FLOOR_INTERVAL in $FLOOR_INTERVALS; do
							FLOOR_ENGINE=none point floor "$condition" "$run"
						done
					fi
					if [[ "$engine" == redis && "$FLOOR_REDIS" == 1 ]] && ((NODES > 1)); then
						for FLOOR_INTERVAL in $FLOOR_INTERVALS; do
							FLOOR_ENGINE=redis point floor "$condition" "$run"
						done
					fi
					continue
				fi
				point "$server" "$condition" "$run"
			done
		done
		cf_schema_drop
	done
done

"$TABLE" -p99-limit "$P99_LIMIT" -csv "$RUN/points.csv" -png "$RUN/chart.png" "$RUN/points" >"$RUN/table.md"
cat "$RUN/table.md"
log "done: ${RUN#"$ROOT"/}"
