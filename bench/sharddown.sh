#!/usr/bin/env bash
# A stopped shard costs only its own channels: 2 Herald nodes on a sharded
# engine (SHARDS shards, 2 by default), one channel on each shard
# (herald-bench shard-channel names it), SUBSCRIBERS subscribers of each
# channel on node 2, and publications through node 1's server API at RATE
# per channel, in one-second steps for DURATION seconds. STOP_AT seconds
# into the measured steps the last shard is stopped (Redis: its
# redis-server is killed; PostgreSQL: its private cluster stops with
# pg_ctl -m fast, which cuts every session), and START_AT seconds in it is
# started again. The last shard, because shard 0 also carries the node
# registry and control messages.
#
# Per shard and second the run records the offered and achieved rate,
# publish errors, the p99 of all copies (from each publication's intended
# send time, so a publication held up by the outage is charged for it) and
# the copies missing. What to expect: the other shards' channels keep their
# rate and p99 with nothing missing throughout; the stopped shard's channel
# fails its publishes (the API answers the temporary error) while it is
# down and recovers after the restart.
#
#   bench/sharddown.sh                                              PostgreSQL, 2 shards, 30 s (~1 min)
#   ENGINE=redis bench/sharddown.sh                                 the same on Redis
#   ENGINE=redis SHARDS=4 RATE=500 bench/sharddown.sh               4 shards, more load
#   DURATION=12 STOP_AT=4 START_AT=8 RATE=100 bench/sharddown.sh    a smoke run
#
# PostgreSQL shards are always private clusters of the run's own (lib.sh's
# PG_SHARD_CLUSTERS=private: the run must stop one), Redis shards
# redis-servers of its own; both live on BASE_PORT+950+i and BASE_PORT+900+i.
# One herald-bench process runs per shard, so that publications held up
# on the stopped shard never hold up another shard's publisher.
#
# Environment (defaults): SHARDS (2), RATE (200, per channel), DURATION
# (30, seconds), STOP_AT (10), START_AT (20), SUBSCRIBERS (50 per
# channel), WARMUP (3s), API_CONNS (16 per channel), GRACE (2s, how long
# a step waits for late copies), and lib.sh's BASE_PORT, RESULTS, FORMAT,
# HISTORY, PG_SHARD_BIN.
#
# Writes sharddown.md (the table, also printed), events.txt (when the
# shard stopped and started, in seconds of the timeline), the herald-bench
# outputs per shard (sN.csv, sN.md, sN.log), the nodes' logs and final
# metrics, and the shards' server logs into the run folder.
ENGINE=${ENGINE:-postgres}
[[ "$ENGINE" == postgres || "$ENGINE" == redis ]] || {
	echo "error: ENGINE=$ENGINE: want postgres or redis" >&2
	exit 1
}
SHARDS=${SHARDS:-2}
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] && ((SHARDS >= 2)) || {
	echo "error: SHARDS=$SHARDS: want 2 or more" >&2
	exit 1
}
PG_SHARD_CLUSTERS=private
source "$(dirname "$0")/lib.sh"

RATE=${RATE:-200}
DURATION=${DURATION:-30}
STOP_AT=${STOP_AT:-10}
START_AT=${START_AT:-20}
SUBSCRIBERS=${SUBSCRIBERS:-50}
WARMUP=${WARMUP:-3s}
API_CONNS=${API_CONNS:-16}
GRACE=${GRACE:-2s}
for v in DURATION STOP_AT START_AT SUBSCRIBERS API_CONNS; do
	[[ "${!v}" =~ ^[0-9]+$ ]] || die "$v: want a whole number, got ${!v}"
done
((0 < STOP_AT && STOP_AT < START_AT && START_AT < DURATION)) || die "want 0 < STOP_AT < START_AT < DURATION"
((DURATION <= 600)) || die "DURATION: at most 600 seconds"
WARMUP_S=${WARMUP%s}
[[ "$WARMUP_S" =~ ^[0-9]+$ ]] || die "WARMUP: want whole seconds, got $WARMUP"
# Connecting, the warm-up, the steps, the late copies; anything longer is
# a hang, and the run ends.
RUN_TIMEOUT=$((DURATION + WARMUP_S + 120))
DOWN=$((SHARDS - 1))

start_run "sharddown-$ENGINE"
BENCH_PID=""
stop_bench() {
	local p
	for p in $BENCH_PID; do
		kill -INT "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BENCH_PID=""
}
trap 'stop_bench; stop_all; stop_shards' EXIT

start_node 1
start_node 2

channels=()
for ((s = 0; s < SHARDS; s++)); do
	channels+=("$("$BENCH" shard-channel --shards "$SHARDS" --shard "$s" --prefix sharddown)")
done
log "channels: ${channels[*]} (shard $DOWN stops at ${STOP_AT}s, starts at ${START_AT}s)"

# The same rate DURATION times: each step is one second.
rates=$(for ((i = 0; i < DURATION; i++)); do echo "$RATE"; done | paste -sd, -)
for ((s = 0; s < SHARDS; s++)); do
	# --max-lag above the whole run: the stopped shard's publisher falls
	# behind while its publishes wait, and must carry on, not give up.
	cmd=(timeout -s INT -k 10 "$RUN_TIMEOUT" "$BENCH" latency
		--url "$(node_url 2)" --secret "$SECRET" --format "$FORMAT"
		--subscribers "$SUBSCRIBERS" --channel "${channels[$s]}"
		--api "$(node_api 1)" --api-key "$API_KEY" --api-conns "$API_CONNS"
		--payload 128 --rates "$rates" --step 1s --down=false --warmup "$WARMUP"
		--grace "$GRACE" --max-lag "$((DURATION + 60))s"
		--csv "$RUN/s$s.csv")
	printf '%q ' "${cmd[@]}" | sed "s|$ROOT/||g" >>"$RUN/commands.txt"
	echo >>"$RUN/commands.txt"
	"${cmd[@]}" >"$RUN/s$s.md" 2>"$RUN/s$s.log" &
	BENCH_PID+=" $!"
done
# Every load connected: its warm-up starts now, and its first measured
# step WARMUP later. The loads start within a few milliseconds of each
# other; the events below are timed from the last one's start.
for ((s = 0; s < SHARDS; s++)); do
	for _ in $(seq $((RUN_TIMEOUT * 10))); do
		grep -q 'subscribers connected' "$RUN/s$s.log" 2>/dev/null && break
		grep -q '^Error' "$RUN/s$s.log" 2>/dev/null && die "herald-bench for shard $s failed: $(tail -n 3 "$RUN/s$s.log")"
		sleep 0.1
	done
	grep -q 'subscribers connected' "$RUN/s$s.log" || die "herald-bench for shard $s did not connect (see s$s.log)"
done
t0=$(date +%s.%N)
t0=$(awk -v t="$t0" -v w="$WARMUP_S" 'BEGIN { printf "%.3f", t + w }')
at() { # SECONDS: sleeps until SECONDS into the measured timeline
	local d
	d=$(awk -v t0="$t0" -v s="$1" -v now="$(date +%s.%N)" 'BEGIN { d = t0 + s - now; printf "%.3f", (d > 0 ? d : 0) }')
	sleep "$d"
}
since() { awk -v t0="$t0" -v now="$(date +%s.%N)" 'BEGIN { printf "%.2f", now - t0 }'; }

at "$STOP_AT"
log "stopping shard $DOWN"
stopped=$(since)
shard_stop "$DOWN"
stopped_done=$(since)
at "$START_AT"
log "starting shard $DOWN"
started=$(since)
shard_start "$DOWN"
started_done=$(since)
{
	echo "shard $DOWN stop: ${stopped}s (stopped at ${stopped_done}s)"
	echo "shard $DOWN start: ${started}s (answering at ${started_done}s)"
} >"$RUN/events.txt"
log "shard $DOWN: stopped at ${stopped}s, answering again at ${started_done}s"

failed=0
for p in $BENCH_PID; do
	wait "$p" || failed=1
done
BENCH_PID=""
((failed == 0)) || log "a herald-bench exited with an error (see s*.log)"

# One row per second: the shards side by side. Step k (from 1) is the
# second [k-1, k) of the timeline; its phase: up (it ended before the
# stop), down (any part of it between the stop and the moment the shard
# answered again), back (it began after that).
TABLE="$RUN/sharddown.md"
{
	echo "# Shard down ($ENGINE, $SHARDS shards)"
	echo
	echo "2 nodes; one channel per shard with $SUBSCRIBERS subscribers on node 2; $RATE publications/s per channel through node 1's API, 128 bytes, in 1 s steps after a ${WARMUP_S}s warm-up."
	echo "Shard $DOWN stopped at ${stopped}s (down at ${stopped_done}s) and started at ${started}s (answering at ${started_done}s)."
	echo "Per shard: achieved publications/s / publish errors / p99 of all copies (ms, from the intended send time) / missing copies."
	echo
	printf '| s | shard %d phase |' "$DOWN"
	for ((s = 0; s < SHARDS; s++)); do printf ' shard %d (%s) |' "$s" "${channels[$s]}"; done
	echo
	printf '|---:|---|'
	for ((s = 0; s < SHARDS; s++)); do printf -- '---|'; done
	echo
	# The CSVs side by side; a shard whose herald-bench failed has no rows.
	awk -F, -v n="$SHARDS" -v stop="$stopped" -v start="$started_done" '
		FNR == 1 {
			f++
			for (i = 1; i <= NF; i++) col[$i] = i
			next
		}
		{
			k = $col["step"] + 0
			cell[f, k] = sprintf("%.0f / %d / %.1f / %d", $col["achieved_rate"], $col["publish_errors"], $col["all_p99_us"] / 1000, $col["missing"])
			if (k > last) last = k
			seen[k] = 1
		}
		END {
			# Steps are numbered from 1 after the warm-up (step 0).
			for (k = 1; k <= last; k++) {
				if (!seen[k]) continue
				phase = k <= stop ? "up" : (k - 1 >= start ? "back" : "down")
				line = sprintf("| %d | %s |", k, phase)
				for (i = 1; i <= n; i++) line = line " " ((i, k) in cell ? cell[i, k] : "–") " |"
				print line
			}
		}' $(for ((s = 0; s < SHARDS; s++)); do echo "$RUN/s$s.csv"; done)
	echo
	echo "Sums per shard and phase (publications accepted / publish errors / copies missing):"
	echo
	for ((s = 0; s < SHARDS; s++)); do
		[[ -s "$RUN/s$s.csv" ]] || {
			echo "- shard $s: no results (see s$s.log)"
			continue
		}
		awk -F, -v s="$s" -v stop="$stopped" -v start="$started_done" '
			FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			{
				k = $col["step"] + 0
				phase = k <= stop ? "up" : (k - 1 >= start ? "back" : "down")
				acc[phase] += $col["accepted"]; err[phase] += $col["publish_errors"]; miss[phase] += $col["missing"]
			}
			END {
				printf "- shard %d: up %d / %d / %d, down %d / %d / %d, back %d / %d / %d\n", s,
					acc["up"], err["up"], miss["up"], acc["down"], err["down"], miss["down"], acc["back"], err["back"], miss["back"]
			}' "$RUN/s$s.csv"
	done
	echo
	echo "First publish error of the stopped shard's load: $(grep -m1 -o 'publish errors .*' "$RUN/s$DOWN.log" 2>/dev/null || echo none)"
	echo "Machine: see machine.txt; exact commands: commands.txt."
} >"$TABLE"
cat "$TABLE"
log "done: ${RUN#"$ROOT"/}"
