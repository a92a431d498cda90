#!/usr/bin/env bash
# The machine's floor of delivery and of the connection rate, measured with
# herald-bench against bench/floor (a server on Herald's connection layer
# that answers connect/subscribe with canned replies and writes each API
# publication, encoded once, to every subscriber socket from WRITERS writer
# goroutines; see bench/floor/doc.go). Herald's results are reported as
# ratios to these. Same shapes and flags as the Herald scenarios:
#
#   latency   the PostgreSignalR shape (bench/postgresignalr.sh): 500
#             subscribers, 128-byte publications through the API over 8
#             connections, 200 → 1,000 msg/s, 5 s steps
#   fanout    bench/fanout.sh: 10,000 subscribers of one channel, API over
#             4 connections, 1, 5, 10, 20, 50 msg/s, 15 s steps
#   conns     19,000 connections as fast as they go (--rate 0 --workers 4
#             --dial-concurrency 256, connect + 1 subscribe each), against
#             the bare floor (accept, upgrade, canned replies, hold) with
#             the raw handshake and no token, the raw handshake with the
#             JWT checked, Herald's net/http handshake with the JWT
#             checked, and the full floor (which also joins the channel)
#
# latency and fanout run once per writer count of WRITERS_LIST (1 and 2);
# the writer count does not matter to conns, which runs once per variant.
#
#   bench/floor.sh                 everything (about 6 minutes)
#   bench/floor.sh latency fanout  some of it
#   bench/floor.sh --quick         50 / 200 / 500 connections, 2 s steps (a check that it works)
#
# Environment (with lib.sh's FORMAT, RESULTS): WRITERS_LIST="1 2", SUBSCRIBERS,
# RATES, STEP, FANOUT_SUBSCRIBERS, FANOUT_RATES, FANOUT_STEP, WARMUP, CONNS,
# CONNS_VARIANTS="bare-raw bare-raw-jwt bare-http-jwt full-http-jwt",
# FLOOR_PORT=18300 (the API listens on FLOOR_PORT+1), RUN_TIMEOUT=300 (s,
# bound of each herald-bench run), FLOOR_ARGS (more flags for every floor
# server, e.g. "-write-timeout 10s" to set a write deadline per write as
# Herald does).
# The floor has no engine: lib.sh must not start services for one.
ENGINE=memory
source "$(dirname "$0")/lib.sh"

WRITERS_LIST=${WRITERS_LIST:-1 2}
SUBSCRIBERS=${SUBSCRIBERS:-500}
RATES=${RATES:-200,400,600,800,900,1000}
STEP=${STEP:-5s}
FANOUT_SUBSCRIBERS=${FANOUT_SUBSCRIBERS:-10000}
FANOUT_RATES=${FANOUT_RATES:-1,5,10,20,50}
FANOUT_STEP=${FANOUT_STEP:-15s}
WARMUP=${WARMUP:-5s}
CONNS=${CONNS:-19000}
CONNS_VARIANTS=${CONNS_VARIANTS:-bare-raw bare-raw-jwt bare-http-jwt full-http-jwt}
FLOOR_PORT=${FLOOR_PORT:-18300}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
FLOOR="$ROOT/.tmp/bin/floor"

scenarios=()
for arg in "$@"; do
	case "$arg" in
	--quick) SUBSCRIBERS=50 FANOUT_SUBSCRIBERS=200 CONNS=500 STEP=2s FANOUT_STEP=2s WARMUP=1s \
		FANOUT_RATES=5,50 RUN_TIMEOUT=60 ;;
	latency | fanout | conns) scenarios+=("$arg") ;;
	*) die "unknown argument $arg: want latency, fanout, conns or --quick" ;;
	esac
done
((${#scenarios[@]} > 0)) || scenarios=(latency fanout conns)

start_run floor
log "building the floor server"
(cd "$ROOT/bench" && go build -o "$FLOOR" ./floor)
echo "floor: bench/floor, FORMAT=$FORMAT, writers: $WRITERS_LIST" >>"$RUN/machine.txt"

FLOOR_PID=
FLOOR_NAME=

# start_floor NAME ARGS...: starts the floor server (its log and exit
# counters go to NAME.log / NAME.stats.json) and waits until it answers.
start_floor() {
	local name=$1
	shift
	local cmd=("$FLOOR" -addr "127.0.0.1:$FLOOR_PORT" -api-addr "127.0.0.1:$((FLOOR_PORT + 1))" -api-key "$API_KEY" "$@")
	# shellcheck disable=SC2206 # FLOOR_ARGS is a list of flags
	cmd+=(${FLOOR_ARGS:-})
	if (exec 3<>"/dev/tcp/127.0.0.1/$FLOOR_PORT") 2>/dev/null; then
		die "port $FLOOR_PORT is taken (another run?); set FLOOR_PORT to move the floor"
	fi
	printf '%q ' "${cmd[@]}" | sed "s|$ROOT/||g" >>"$RUN/commands.txt"
	echo "&" >>"$RUN/commands.txt"
	"${cmd[@]}" >"$RUN/$name.stats.json" 2>"$RUN/$name.log" &
	FLOOR_PID=$! FLOOR_NAME=$name
	# lib.sh's exit trap stops what is in NODE_PIDS.
	NODE_PIDS+=("$FLOOR_PID")
	for _ in $(seq 100); do
		if curl -fsS "http://127.0.0.1:$((FLOOR_PORT + 1))/healthz" >/dev/null 2>&1; then
			log "floor $name: pid $FLOOR_PID, port $FLOOR_PORT"
			return 0
		fi
		kill -0 "$FLOOR_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$RUN/$name.log" >&2
	die "the floor server did not start"
}

# stop_floor stops the floor server; it prints its counters at exit.
stop_floor() {
	[[ -n "$FLOOR_PID" ]] || return 0
	kill -TERM "$FLOOR_PID" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$FLOOR_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$FLOOR_PID" 2>/dev/null || true
	wait "$FLOOR_PID" 2>/dev/null || true
	NODE_PIDS=()
	log "floor $FLOOR_NAME stopped: $(cat "$RUN/$FLOOR_NAME.stats.json" 2>/dev/null)"
	FLOOR_PID=
}

floor_url() { echo "ws://127.0.0.1:$FLOOR_PORT/connection/websocket"; }
floor_api() { echo "http://127.0.0.1:$((FLOOR_PORT + 1))/api"; }

# bounded CMD...: runs a herald-bench command, recorded, stopped after
# RUN_TIMEOUT seconds (SIGINT first, so that it closes its connections).
bounded() {
	record_command timeout -s INT -k 15 "$RUN_TIMEOUT" "$@"
}

run_latency() {
	local w
	for w in $WRITERS_LIST; do
		start_floor "latency-w$w" -writers "$w"
		bounded "$BENCH" latency \
			--url "$(floor_url)" --secret "$SECRET" --format "$FORMAT" \
			--subscribers "$SUBSCRIBERS" --channel psr \
			--api "$(floor_api)" --api-key "$API_KEY" --api-conns 8 \
			--payload 128 --rates "$RATES" --step "$STEP" --down=false --warmup "$WARMUP" \
			--server-pid "$FLOOR_PID" \
			--csv "$RUN/latency-w$w.csv" --png "$RUN/latency-w$w.png" \
			--title "floor, PostgreSignalR shape, $SUBSCRIBERS subscribers, $w writer(s)" |
			tee "$RUN/latency-w$w.md" || log "latency, $w writer(s): herald-bench failed (status $?)"
		stop_floor
	done
}

run_fanout() {
	local w
	for w in $WRITERS_LIST; do
		start_floor "fanout-w$w" -writers "$w"
		bounded "$BENCH" latency \
			--url "$(floor_url)" --secret "$SECRET" --format "$FORMAT" \
			--subscribers "$FANOUT_SUBSCRIBERS" --connect-rate 5000 --channel fanout \
			--api "$(floor_api)" --api-key "$API_KEY" --api-conns 4 \
			--payload 128 --rates "$FANOUT_RATES" --step "$FANOUT_STEP" --down=false --warmup "$WARMUP" \
			--p99-limit 2s --server-pid "$FLOOR_PID" \
			--csv "$RUN/fanout-w$w.csv" --png "$RUN/fanout-w$w.png" \
			--title "floor, fan-out to $FANOUT_SUBSCRIBERS subscribers, $w writer(s)" |
			tee "$RUN/fanout-w$w.md" || log "fanout, $w writer(s): herald-bench failed (status $?)"
		stop_floor
	done
}

run_conns() {
	local v args k=0
	for v in $CONNS_VARIANTS; do
		# A source address of each run's own: the previous run's closed
		# connections sit in TIME_WAIT on its ports for a minute.
		k=$((k + 1))
		case "$v" in
		bare-raw) args=(-bare -upgrade raw) ;;
		bare-raw-jwt) args=(-bare -upgrade raw -secret "$SECRET") ;;
		bare-http-jwt) args=(-bare -upgrade http -secret "$SECRET") ;;
		full-http-jwt) args=(-upgrade http -secret "$SECRET") ;;
		*) die "CONNS_VARIANTS: unknown variant $v" ;;
		esac
		start_floor "conns-$v" "${args[@]}"
		bounded "$BENCH" conns \
			--url "$(floor_url)" --source "127.0.0.$((k + 1))" --secret "$SECRET" --format "$FORMAT" \
			-n "$CONNS" --rate 0 --workers 4 --dial-concurrency 256 --channels 1 --channel-prefix conns \
			--hold 5s --settle 3s --timeout "$((RUN_TIMEOUT - 10))s" \
			--server-pid "$FLOOR_PID" | tee "$RUN/conns-$v.txt" || log "conns $v: herald-bench failed (status $?)"
		stop_floor
	done
}

for s in "${scenarios[@]}"; do
	"run_$s"
done
log "done: ${RUN#"$ROOT"/}"
