#!/usr/bin/env bash
# Issue 37's Performance section: what token revocation and user blocking
# cost a connect, and how fast get_user_status answers for 1,000 users.
# Per point, a fresh node of ENGINE (memory or postgres; redis works too),
# herald-bench paid: LOADED revoked token ids and LOADED blocked users loaded
# through the server API (none of them the measured clients'), then CONNECTS
# connects, CONCURRENCY at a time, each a fresh WebSocket connection with a
# token of its own jti and iat, closed once answered (connects/s, connect
# latency p50/p99); then get_user_status of STATUS_USERS users at once,
# STATUS_ROUNDS times (p50/p99). The points are LOADED=0 and LOADED=LOAD,
# in that order, RUNS times; summary.md has one row per point.
#
#   bench/paid.sh                          memory, LOAD=100000, CONNECTS=5000, RUNS=3
#   ENGINE=postgres bench/paid.sh          the decisions and statuses in PostgreSQL
#   LOAD=1000 CONNECTS=200 STATUS_ROUNDS=10 RUNS=1 bench/paid.sh   smoke
#
# On Redis a run's key prefix outlives its nodes (lib.sh), so the decisions
# of a loaded point would still be there for the next unloaded one: RUNS=1.
source "$(dirname "$0")/lib.sh"

LOAD=${LOAD:-100000}
CONNECTS=${CONNECTS:-5000}
CONCURRENCY=${CONCURRENCY:-16}
STATUS_USERS=${STATUS_USERS:-1000}
STATUS_ROUNDS=${STATUS_ROUNDS:-200}
RUNS=${RUNS:-3}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$LOAD" =~ ^[1-9][0-9]*$ ]] || die "LOAD=$LOAD: want one positive count"
[[ "$ENGINE" != redis || "$RUNS" == 1 ]] || die "ENGINE=redis: RUNS=1 (the loaded decisions outlive the node)"

# point RUN LOADED: a fresh node, the measurement, the node stopped.
point() {
	local run=$1 loaded=$2 dir
	dir="$RUN/$ENGINE-$loaded-$run"
	mkdir -p "$dir"
	log "run $run, $loaded revoked and $loaded blocked"
	start_node 1
	record_command "$BENCH" paid --url "$(node_url 1)" --api "$(node_api 1)" --api-key "$API_KEY" --secret "$SECRET" \
		--revoked "$loaded" --blocked "$loaded" -n "$CONNECTS" --concurrency "$CONCURRENCY" \
		--status-users "$STATUS_USERS" --status-rounds "$STATUS_ROUNDS" --json >"$dir/paid.json" 2>"$dir/progress.txt" ||
		log "run $run, $loaded loaded: herald-bench failed (see ${dir#"$ROOT"/})"
	stop_all
	mv "$RUN/node1.log" "$RUN/node1.metrics.txt" "$dir/" 2>/dev/null || true
	jq -c --arg e "$ENGINE" --arg r "$run" --argjson l "$loaded" \
		'.summary + {engine: $e, run: ($r | tonumber), loaded: $l}' "$dir/paid.json" >>"$RUN/rows.jsonl" || true
}

start_run paid
for run in $(seq "$RUNS"); do
	point "$run" 0
	point "$run" "$LOAD"
done

{
	echo "| engine | revoked jtis + blocked users | run | connects/s | connect p50 | connect p99 | get_user_status ($STATUS_USERS users) p50 | p99 |"
	echo "|---|---|---|---|---|---|---|---|"
	jq -r '
		def ms: (. / 1e6 * 100 | round / 100 | tostring) + " ms";
		"| \(.engine) | \(.loaded) + \(.loaded) | \(.run) | \(.Rate | round) | \(.Connect.P50 | ms) | \(.Connect.P99 | ms) | \(.Status.P50 | ms) | \(.Status.P99 | ms) |"
	' "$RUN/rows.jsonl"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
