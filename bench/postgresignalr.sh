#!/usr/bin/env bash
# Scenario 1, the PostgreSignalR workload: 2 nodes, 500 subscribers on node 2,
# 128-byte publications sent through the server API of node 1, 100 -> 2,000
# msg/s in steps of 100 and back down, 15 s per step (about 10 minutes).
#
#   bench/postgresignalr.sh            the full sweep
#   bench/postgresignalr.sh --quick    100 -> 1,000 by 300, 3 s steps (about 30 s)
#   ENGINE=postgres bench/postgresignalr.sh
#
# With ENGINE=memory (the default until the cluster engines land) the nodes
# cannot share publications, so one node serves both the API and the
# subscribers; the table says so.
source "$(dirname "$0")/lib.sh"

RATES=${RATES:-100:2000:100}
STEP=${STEP:-15s}
SUBSCRIBERS=${SUBSCRIBERS:-500}
WARMUP=${WARMUP:-5s}
DOWN=${DOWN:-true}        # false: step up only
P99_LIMIT=${P99_LIMIT:-0} # e.g. 2s: stop after a step whose p99 is above it (0: never)
if [[ "${1:-}" == "--quick" ]]; then
	RATES=100:1000:300 STEP=3s WARMUP=2s
fi

start_run postgresignalr
start_node 1
sub_node=1
if multi_node_engine; then
	start_node 2
	sub_node=2
else
	log "ENGINE=memory: one node for publisher and subscribers (the memory engine does not connect nodes)"
fi

record_command "$BENCH" latency \
	--url "$(node_url $sub_node)" --secret "$SECRET" --format "$FORMAT" \
	--subscribers "$SUBSCRIBERS" --channel psr \
	--api "$(node_api 1)" --api-key "$API_KEY" --api-conns 8 \
	--payload 128 --rates "$RATES" --step "$STEP" --down="$DOWN" --p99-limit "$P99_LIMIT" --warmup "$WARMUP" \
	--server-pid "$(node_pids)" \
	--csv "$RUN/latency.csv" --png "$RUN/latency.png" --title "PostgreSignalR workload, engine $ENGINE" \
	| tee "$RUN/latency.md"
log "done: ${RUN#"$ROOT"/}"
