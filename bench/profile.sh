#!/usr/bin/env bash
# Where the time goes under load: one node (memory engine unless ENGINE is
# set; then node 1 takes the API and node 2 the subscribers), one steady
# rate for STEP, and in the middle of it a CPU profile, a mutex and a block
# profile of the subscribers' node, with its counters before and after:
# writes (frames) per delivered message, bytes per write, the scheduler's
# latency and GC.
#
#   RATE=600 bench/profile.sh                  the PostgreSignalR shape (500 subscribers)
#   RATE=1 SUBSCRIBERS=10000 bench/profile.sh  the fan-out shape
#   WRITE_COALESCE=5ms RATE=900 bench/profile.sh
#   ENGINE=redis CLIENT=heavy RATE=400 TRACE_SECONDS=3 bench/profile.sh   node 2 of the side-by-side shape
#
# CLIENT=light  herald-bench --client: light, heavy or sdk (centrifuge-go; the script then
#               builds herald-bench with -tags benchsdk, as bench/sidebyside.sh does)
# TRACE_SECONDS=0  after the profiles, an execution trace of this many seconds (trace.out),
#               and from it where goroutines waited for a CPU once runnable (sched.txt:
#               `go tool trace -pprof=sched`, by stack)
#
# Results: cpu.pprof, mutex.pprof, block.pprof, allocs.pprof (over the window), top.txt and summary.txt in
# the run folder (open a profile with `go tool pprof -http : .tmp/bin/herald cpu.pprof`).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"

RATE=${RATE:-600}
SUBSCRIBERS=${SUBSCRIBERS:-500}
STEP=${STEP:-30s}
PROFILE_SECONDS=${PROFILE_SECONDS:-10}
TRACE_SECONDS=${TRACE_SECONDS:-0}
CLIENT=${CLIENT:-light}
[[ "$TRACE_SECONDS" =~ ^[0-9]+$ ]] || die "TRACE_SECONDS=$TRACE_SECONDS: want whole seconds"
ADMIN_PORT=${ADMIN_PORT:-18399}

start_run "profile-r$RATE"
bench_sdk_build
sub_node=1
admin_yaml=$(printf 'admin:\n  address: "127.0.0.1:%d"\n  mutex_profile_fraction: 100\n  block_profile_rate: 100000\n' "$ADMIN_PORT")
if multi_node_engine; then
	start_node 1
	start_node 2 "$admin_yaml"
	sub_node=2
else
	start_node 1 "$admin_yaml"
fi
sub_pid=${NODE_PIDS[$((sub_node - 1))]}
admin="http://127.0.0.1:$ADMIN_PORT"

# counters NAME: the sum of a metric's samples on the subscribers' node.
counters() {
	curl -fsS "$admin/metrics" | awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $NF } END { printf "%.0f\n", s }'
}
snapshot() {
	echo "frames $(counters herald_client_sent_frames_total)"
	echo "bytes $(counters herald_client_sent_bytes_total)"
	echo "pubs $(counters herald_client_messages_sent_total)"
	echo "gc $(counters go_gc_cycles_total_gc_cycles_total)"
	echo "cpu $(awk '{ print $14 + $15 }' "/proc/$sub_pid/stat")"
	curl -fsS "$admin/metrics" | awk '/^go_sched_latencies_seconds_bucket/ { print "sched " $0 }'
}

record_command "$BENCH" latency --client "$CLIENT" \
	--url "$(node_url $sub_node)" --secret "$SECRET" --format "$FORMAT" \
	--subscribers "$SUBSCRIBERS" --connect-rate 5000 --channel prof \
	--api "$(node_api 1)" --api-key "$API_KEY" --api-conns 8 \
	--payload 128 --rates "$RATE" --step "$STEP" --down=false --warmup 3s \
	--server-pid "$(node_pids)" >"$RUN/latency.md" 2>"$RUN/latency.log" &
bench_pid=$!

# Wait until the subscribers are connected and the step is under way.
for _ in $(seq 600); do
	grep -q "steps of" "$RUN/latency.log" 2>/dev/null && break
	kill -0 "$bench_pid" 2>/dev/null || die "herald-bench ended early: $(tail -3 "$RUN/latency.log")"
	sleep 0.1
done
sleep 5
snapshot >"$RUN/before.txt"
curl -fsS "$admin/debug/pprof/mutex" -o "$RUN/mutex0.pprof"
curl -fsS "$admin/debug/pprof/block" -o "$RUN/block0.pprof"
curl -fsS "$admin/debug/pprof/allocs" -o "$RUN/allocs0.pprof"
curl -fsS "$admin/debug/pprof/profile?seconds=$PROFILE_SECONDS" -o "$RUN/cpu.pprof"
curl -fsS "$admin/debug/pprof/mutex" -o "$RUN/mutex.pprof"
curl -fsS "$admin/debug/pprof/block" -o "$RUN/block.pprof"
curl -fsS "$admin/debug/pprof/allocs" -o "$RUN/allocs.pprof"
snapshot >"$RUN/after.txt"
if ((TRACE_SECONDS > 0)); then
	curl -fsS "$admin/debug/pprof/trace?seconds=$TRACE_SECONDS" -o "$RUN/trace.out"
fi
wait "$bench_pid" || true

ticks=$(getconf CLK_TCK)
{
	echo "rate $RATE msg/s to $SUBSCRIBERS $CLIENT subscribers, write_coalesce $WRITE_COALESCE, engine $ENGINE, $PROFILE_SECONDS s profiled"
	awk -v ticks="$ticks" -v secs="$PROFILE_SECONDS" '
		FNR == NR && $1 != "sched" { a[$1] = $2; next }
		$1 != "sched" { b[$1] = $2 }
		END {
			frames = b["frames"] - a["frames"]; msgs = b["pubs"] - a["pubs"]; bytes = b["bytes"] - a["bytes"]
			cpu = (b["cpu"] - a["cpu"]) / ticks
			printf "messages %d, writes %d: %.2f messages per write, %.0f bytes per write, %.3f writes per delivered message\n", msgs, frames, msgs / frames, bytes / frames, frames / msgs
			printf "server CPU %.2f s in %d s (%.0f%% of a core): %.2f us per delivered message, %.2f us per write\n", cpu, secs, 100 * cpu / secs, 1e6 * cpu / msgs, 1e6 * cpu / frames
			printf "GC cycles %d\n", b["gc"] - a["gc"]
		}' "$RUN/before.txt" "$RUN/after.txt"
	# The scheduler latency histogram over the profiled window: p50/p99.
	awk '
		FNR == NR && $1 == "sched" { split($2, x, "\""); a[x[2]] = $3; next }
		$1 == "sched" { split($2, x, "\""); d[x[2]] = $3 - a[x[2]]; if (!(x[2] in seen)) { order[n++] = x[2]; seen[x[2]] = 1 } }
		END {
			total = d["+Inf"]; p50 = ""; p99 = ""
			for (i = 0; i < n; i++) { le = order[i]
				if (p50 == "" && d[le] >= 0.5 * total) p50 = le
				if (p99 == "" && d[le] >= 0.99 * total) p99 = le }
			printf "goroutine scheduling latency over the window: p50 <= %.3g ms, p99 <= %.3g ms (%d samples)\n", p50 * 1000, p99 * 1000, total
		}' "$RUN/before.txt" "$RUN/after.txt"
	grep '^| [0-9]' "$RUN/latency.md" | head -1 | awk -F'|' '{ printf "latency: all-copies p50 %s ms, p99 %s ms, first-copy p99 %s ms, missing %s\n", $10, $12, $8, $15 }'
} | tee "$RUN/summary.txt"
go tool pprof -top -nodecount 30 "$BIN" "$RUN/cpu.pprof" >"$RUN/top.txt" 2>/dev/null || true
go tool pprof -top -nodecount 15 -base "$RUN/mutex0.pprof" "$BIN" "$RUN/mutex.pprof" >"$RUN/mutex.txt" 2>/dev/null || true
go tool pprof -top -nodecount 15 -base "$RUN/block0.pprof" "$BIN" "$RUN/block.pprof" >"$RUN/block.txt" 2>/dev/null || true
if [[ -s "$RUN/trace.out" ]]; then
	go tool trace -pprof=sched "$RUN/trace.out" >"$RUN/sched.pprof" 2>/dev/null &&
		go tool pprof -top -nodecount 20 "$RUN/sched.pprof" >"$RUN/sched.txt" 2>/dev/null || true
fi
go tool pprof -top -nodecount 20 -sample_index alloc_space -base "$RUN/allocs0.pprof" "$BIN" "$RUN/allocs.pprof" >"$RUN/allocs.txt" 2>/dev/null || true
log "done: ${RUN#"$ROOT"/}"
