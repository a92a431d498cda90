#!/usr/bin/env bash
# Soak: churn clients against 2 nodes on PostgreSQL for a long time and check
# that nothing grows (RSS, goroutines, open files per node) and nothing goes
# missing (every session's stream continuous, every recovery successful).
# 200 client slots, sessions of 5-20 s that resume on the other node from
# where they left, 100 API publications/s to 20 history channels.
#
#   bench/soak.sh                  30 minutes
#   DURATION=3m bench/soak.sh      the short version the test command runs
#
# The exit status is herald-bench soak's: 1 on any error or growth.
# Results (samples CSV, chart PNG, verdict) go to bench/results/soak-*.
export ENGINE=${ENGINE:-postgres}
export HISTORY=${HISTORY:-1000}
source "$(dirname "$0")/lib.sh"

DURATION=${DURATION:-30m}
CLIENTS=${CLIENTS:-200}
RATE=${RATE:-100}
case "$DURATION" in
*m) mins=${DURATION%m} ;;
*) mins=0 ;;
esac
# A short run samples more often so that its thirds hold enough samples,
# and leaves out a shorter warm-up.
if ((mins >= 10)); then SAMPLE=${SAMPLE:-10s} WARMUP=${WARMUP:-2m}; else SAMPLE=${SAMPLE:-3s} WARMUP=${WARMUP:-30s}; fi

start_run soak
start_node 1
start_node 2
record_command "$BENCH" soak \
	--node "http://127.0.0.1:$(node_port 1)" --node "http://127.0.0.1:$(node_port 2)" \
	--secret "$SECRET" --api-key "$API_KEY" \
	--duration "$DURATION" --warmup "$WARMUP" --sample "$SAMPLE" \
	--clients "$CLIENTS" --rate "$RATE" --channels 20 --prefix soak- \
	--csv "$RUN/soak.csv" --png "$RUN/soak.png" \
	--title "Soak $DURATION, 2 nodes on $ENGINE: $CLIENTS churning clients, $RATE publications/s" \
	| tee "$RUN/soak.md"
rc=${PIPESTATUS[0]}
log "done: ${RUN#"$ROOT"/} (exit $rc)"
exit "$rc"
