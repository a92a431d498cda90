#!/usr/bin/env bash
# Cores that add up: one node (memory engine) at GOMAXPROCS 1 and then 2,
# SUBSCRIBERS clients of one channel, 128-byte publications through the
# server API. For each: the highest rate at which the all-copies p99 stays
# within P99 (herald-bench throughput), the copies delivered per second
# there, and the node's CPU per delivered copy; then a CPU, mutex and block
# profile at RATE (bench/profile.sh) to show where the time goes.
#
#   bench/scaling.sh                 GOMAXPROCS 1 and 2
#   PROCS="1 2 4" bench/scaling.sh   on a bigger machine
#
# The load tool runs on the same machine: CPU per copy, not copies/s alone,
# says whether the node scales (it is constant when cores add up).
source "$(dirname "$0")/lib.sh"

PROCS=${PROCS:-1 2}
SUBSCRIBERS=${SUBSCRIBERS:-500}
P99=${P99:-100ms}
PROBE=${PROBE:-5s}
RATE=${RATE:-1000}

start_run scaling
for p in $PROCS; do
	NODE_GOMAXPROCS=$p start_node 1
	log "GOMAXPROCS=$p: throughput search"
	record_command "$BENCH" throughput \
		--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
		--subscribers "$SUBSCRIBERS" --channel scaling \
		--api "$(node_api 1)" --api-key "$API_KEY" --api-conns 16 --batch 16 \
		--payload 128 --p99 "$P99" --start 500 --probe "$PROBE" --warmup 2s \
		--server-pid "$(node_pids)" --json >"$RUN/throughput-p$p.json" 2>"$RUN/throughput-p$p.log" || true
	stop_all
	NODE_PIDS=() NODE_PORTS=()
	BASE_PORT=$((BASE_PORT + 10))
done
# A summary line per GOMAXPROCS: the best passing probe.
for p in $PROCS; do
	python3 - "$RUN/throughput-p$p.json" "$p" <<'PY' | tee -a "$RUN/scaling.md"
import json, sys
best = None
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    if "probe" in o and o.get("pass") and (best is None or o["probe"]["rate"] > best["rate"]):
        best = o["probe"]
if best is None:
    print(f"| {sys.argv[2]} | no passing probe | | | |")
else:
    copies = best["deliveries"]
    cpu = best.get("server_cpu", 0) / 100  # cores
    per = cpu / copies * 1e9 if copies else 0
    print(f"| {sys.argv[2]} | {best['rate']:.0f} | {copies:,.0f} | {cpu:.2f} | {per:.0f} ns |")
PY
done
log "done: ${RUN#"$ROOT"/}"
