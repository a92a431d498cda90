#!/usr/bin/env bash
# Issue 37's Performance section: what token revocation, user blocking and
# rate limits cost a connect, and how fast get_user_status answers for
# 1,000 users.
# Per point, a fresh node of ENGINE (memory or postgres; redis works too),
# herald-bench paid: LOADED revoked token ids and LOADED blocked users loaded
# through the server API (none of them the measured clients'), then CONNECTS
# connects, CONCURRENCY at a time, each a fresh WebSocket connection with a
# token of its own jti and iat, closed once answered (connects/s, connect
# latency p50/p99); then get_user_status of STATUS_USERS users at once,
# STATUS_ROUNDS times (p50/p99). The points are LOADED=0 and LOADED=LOAD,
# then, with RATE_LIMITS=1 (the default), LOADED=LOAD on a node with rate
# limits on per connection and per user (herald-bench paid
# --print-rate-limits: limits the measured traffic never reaches, so what
# the connects pay is the checks; herald-bench probes that they are on), in
# that order, RUNS times; summary.md has one row per point.
#
#   bench/paid.sh                          memory, LOAD=100000, CONNECTS=5000, RUNS=3
#   ENGINE=postgres bench/paid.sh          the decisions and statuses in PostgreSQL
#   RATE_LIMITS=0 bench/paid.sh            without the rate-limit point
#   LOAD=1000 CONNECTS=200 STATUS_ROUNDS=10 RUNS=1 bench/paid.sh   smoke
#
# Each point has a PostgreSQL schema or Redis key prefix of its own, so a
# point never finds the decisions of the one before (on Redis they outlive
# their node until they expire).
source "$(dirname "$0")/lib.sh"

LOAD=${LOAD:-100000}
CONNECTS=${CONNECTS:-5000}
CONCURRENCY=${CONCURRENCY:-16}
STATUS_USERS=${STATUS_USERS:-1000}
STATUS_ROUNDS=${STATUS_ROUNDS:-200}
RUNS=${RUNS:-3}
RATE_LIMITS=${RATE_LIMITS:-1}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$LOAD" =~ ^[1-9][0-9]*$ ]] || die "LOAD=$LOAD: want one positive count"
[[ "$RATE_LIMITS" =~ ^[01]$ ]] || die "RATE_LIMITS=$RATE_LIMITS: want 0 or 1"
BASE_SCHEMA=$ENGINE_SCHEMA

# point RUN LOADED LIMITS: a fresh node (LIMITS=on: with the rate limits),
# the measurement, the node stopped.
point() {
	local run=$1 loaded=$2 limits=$3 dir
	local -a probe=()
	local NODE_CLIENT_YAML=""
	dir="$RUN/$ENGINE-$loaded-$limits-$run"
	mkdir -p "$dir"
	log "run $run, $loaded revoked and $loaded blocked, rate limits $limits"
	if [[ "$limits" == on ]]; then
		NODE_CLIENT_YAML=$("$BENCH" paid --print-rate-limits | sed 's/^/  /')
		probe=(--rate-limits)
	fi
	# The point's own schema or Redis prefix: Redis keeps the decisions of
	# the point before after its node stops.
	ENGINE_SCHEMA="${BASE_SCHEMA}_${run}_${loaded}_${limits}"
	start_node 1
	record_command "$BENCH" paid --url "$(node_url 1)" --api "$(node_api 1)" --api-key "$API_KEY" --secret "$SECRET" \
		--revoked "$loaded" --blocked "$loaded" -n "$CONNECTS" --concurrency "$CONCURRENCY" \
		--status-users "$STATUS_USERS" --status-rounds "$STATUS_ROUNDS" "${probe[@]}" --json >"$dir/paid.json" 2>"$dir/progress.txt" ||
		log "run $run, $loaded loaded, rate limits $limits: herald-bench failed (see ${dir#"$ROOT"/})"
	stop_all
	mv "$RUN/node1.log" "$RUN/node1.metrics.txt" "$WORK/node1.yaml" "$dir/" 2>/dev/null || true
	jq -c --arg e "$ENGINE" --arg r "$run" --argjson l "$loaded" --arg m "$limits" \
		'.summary + {engine: $e, run: ($r | tonumber), loaded: $l, limits: $m}' "$dir/paid.json" >>"$RUN/rows.jsonl" || true
}

start_run paid
for run in $(seq "$RUNS"); do
	point "$run" 0 off
	point "$run" "$LOAD" off
	if [[ "$RATE_LIMITS" == 1 ]]; then
		point "$run" "$LOAD" on
	fi
done

{
	echo "| engine | revoked jtis + blocked users | rate limits | run | connects/s | connect p50 | connect p99 | get_user_status ($STATUS_USERS users) p50 | p99 |"
	echo "|---|---|---|---|---|---|---|---|---|"
	jq -r '
		def ms: (. / 1e6 * 100 | round / 100 | tostring) + " ms";
		"| \(.engine) | \(.loaded) + \(.loaded) | \(.limits) | \(.run) | \(.Rate | round) | \(.Connect.P50 | ms) | \(.Connect.P99 | ms) | \(.Status.P50 | ms) | \(.Status.P99 | ms) |"
	' "$RUN/rows.jsonl"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
