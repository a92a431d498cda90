#!/usr/bin/env bash
# Sustained publication rates across two nodes: SUBSCRIBERS clients on
# node 2 (few, so that the engine rather than the fan-out is what is
# measured), publications through node 1's server API at each rate of
# RATES for STEP, stepping up until a step's p99 (all copies) passes
# P99_LIMIT or the publisher falls 10 s behind. Per step: achieved
# publications/s and publish-to-deliver latency percentiles.
#
#   ENGINE=postgres bench/throughput.sh               no history
#   ENGINE=postgres HISTORY=100 bench/throughput.sh   every publication also stored (history_size 100)
#   bench/throughput.sh --quick                       4 s steps
#
# API_CONNS concurrent API publishers (64): an API publish returns once the
# engine has accepted it (for PostgreSQL, once its transaction commits), so
# the publishers in flight bound the rate, and the engine batches them.
source "$(dirname "$0")/lib.sh"

SUBSCRIBERS=${SUBSCRIBERS:-10}
RATES=${RATES:-500,1000,2000,3000,4000,6000,8000,12000}
STEP=${STEP:-10s}
WARMUP=${WARMUP:-3s}
P99_LIMIT=${P99_LIMIT:-1s}
API_CONNS=${API_CONNS:-64}
if [[ "${1:-}" == "--quick" ]]; then
	STEP=4s WARMUP=2s
fi

start_run "throughput-h$HISTORY"
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
	--subscribers "$SUBSCRIBERS" --channel tput \
	--api "$(node_api 1)" --api-key "$API_KEY" --api-conns "$API_CONNS" \
	--payload 128 --rates "$RATES" --step "$STEP" --down=false --warmup "$WARMUP" \
	--p99-limit "$P99_LIMIT" --server-pid "$(node_pids)" \
	--csv "$RUN/latency.csv" --png "$RUN/latency.png" \
	--title "sustained publications, 2 nodes, engine $ENGINE, history_size $HISTORY" \
	| tee "$RUN/latency.md"
log "done: ${RUN#"$ROOT"/}"
