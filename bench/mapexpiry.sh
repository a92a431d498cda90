#!/usr/bin/env bash
# Map key expiry at scale (issue 35: 30,000 keys with key_ttl 3s were
# removed up to 31.6 s after they expired). One node with a map namespace
# (map.mode ephemeral, key_ttl KEY_TTL); with a Redis or PostgreSQL engine
# a second node, where the subscriber is, so that the removals cross the
# engine. herald-bench map-expiry subscribes one client, sets KEYS keys
# through node 1's API (batches of BATCH map_publish, FILL_CONC in flight)
# and times each removal the subscriber receives after its key's expiry,
# from its batch's send time plus KEY_TTL (an upper bound) and from its
# answer (a lower bound; smaller batches bring them closer): p50, p99, max
# and how many never came. RUNS runs; summary.md has one row each.
#
#   bench/mapexpiry.sh                   KEYS=30000, KEY_TTL=3s, RUNS=3, memory engine
#   ENGINE=redis bench/mapexpiry.sh      the same on Redis (ENGINE=postgres: PostgreSQL)
#   KEYS=3000 RUNS=1 bench/mapexpiry.sh  smoke
source "$(dirname "$0")/lib.sh"

KEYS=${KEYS:-30000}
KEY_TTL=${KEY_TTL:-3s}
BATCH=${BATCH:-500}
FILL_CONC=${FILL_CONC:-4}
RUNS=${RUNS:-3}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$KEYS" =~ ^[1-9][0-9]*$ ]] || die "KEYS=$KEYS: want one positive count"

NODE_CHANNEL_YAML="  namespaces:
    - name: maps
      subscription_type: map
      allow_subscribe_for_client: true
      map:
        mode: ephemeral
        key_ttl: $KEY_TTL
        max_page_size: 1000"

start_run mapexpiry
start_node 1
sub_node=1
if multi_node_engine; then
	start_node 2
	sub_node=2
fi
echo "engine: $ENGINE, keys: $KEYS, key_ttl: $KEY_TTL, batches of $BATCH, $FILL_CONC in flight, runs: $RUNS" >>"$RUN/machine.txt"

rc=0
for run in $(seq "$RUNS"); do
	log "run $run: $KEYS keys with key_ttl $KEY_TTL (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	code=0
	record_command "$BENCH" map-expiry --json \
		--url "$(node_url $sub_node)" --secret "$SECRET" --format "$FORMAT" \
		--api "$(node_api 1)" --api-key "$API_KEY" --channel "maps:expiry$run" \
		--keys "$KEYS" --key-ttl "$KEY_TTL" --batch "$BATCH" --fill-concurrency "$FILL_CONC" \
		>"$RUN/run$run.json" 2>"$RUN/run$run.log" || code=$?
	((code == 0)) || { rc=$code; log "herald-bench exited with $code (see ${RUN#"$ROOT"/}/run$run.log)"; }
	jq -r --arg r "$run" --arg load "$(cut -d' ' -f1 /proc/loadavg)" '
		def ms: . / 1e6 | round;
		"| \($r) | \(.keys) | \(.fill_ns / 1e9 * 100 | round / 100) | \(.removed) | \(.missing) | \(.lag.P50 | ms) | \(.lag.P99 | ms) | \(.lag.Max | ms) | \(.lag_min.P50 | ms) | \(.lag_min.P99 | ms) | \(.lag_min.Max | ms) | \($load) |"
	' "$RUN/run$run.json" >>"$RUN/summary.rows" 2>/dev/null ||
		echo "| $run | failed: see run$run.log |" >>"$RUN/summary.rows"
done
{
	echo "Map key expiry, engine $ENGINE: $KEYS keys with key_ttl $KEY_TTL; each removal's lag after its key's expiry at a live subscriber."
	echo
	echo "| run | keys | fill s | removed | missing | lag at most: p50 ms | p99 ms | max ms | at least: p50 ms | p99 ms | max ms | load average |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	cat "$RUN/summary.rows"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
exit "$rc"
