#!/usr/bin/env bash
# Scenario 3: fan-out of one channel to 10,000 subscribers on one node.
# Publications go through the node's API at a few rates; the "last copy"
# column is when the last subscriber got each publication.
#
#   bench/fanout.sh           10,000 subscribers, 1, 5, 10, 20, 50 msg/s, 15 s each
#   bench/fanout.sh --quick   1,000 subscribers, 3 s steps
source "$(dirname "$0")/lib.sh"

SUBSCRIBERS=${SUBSCRIBERS:-10000}
RATES=${RATES:-1,5,10,20,50}
STEP=${STEP:-15s}
WARMUP=${WARMUP:-5s}
if [[ "${1:-}" == "--quick" ]]; then
	SUBSCRIBERS=1000 STEP=3s WARMUP=2s
fi

start_run fanout
start_node 1
record_command "$BENCH" latency \
	--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
	--subscribers "$SUBSCRIBERS" --connect-rate 5000 --channel fanout \
	--api "$(node_api 1)" --api-key "$API_KEY" --api-conns 4 \
	--payload 128 --rates "$RATES" --step "$STEP" --down=false --warmup "$WARMUP" \
	--p99-limit 2s --server-pid "$(node_pids)" \
	--csv "$RUN/latency.csv" --png "$RUN/latency.png" --title "fan-out to $SUBSCRIBERS subscribers, engine $ENGINE" \
	| tee "$RUN/latency.md"
log "done: ${RUN#"$ROOT"/}"
