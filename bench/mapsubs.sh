#!/usr/bin/env bash
# Map subscriptions at scale, Herald beside Centrifugo: one node with a map
# namespace (map.mode MAP_MODE, max_page_size PAGE_SIZE). Per point,
# herald-bench maps sets KEYS keys through the server API (batches of
# map_publish), one fresh subscriber reads the snapshot, then LATE fresh
# subscribers read the whole snapshot at once (how many got every key, the
# time until the last was live, p50/p99 of each one's time, the server's
# CPU meanwhile), then SUBSCRIBERS live subscribers get map_publish updates
# to random keys offered at each rate of RATE in turn, STEP each, until a
# step is not served (an update missing or failed, under 95% of the rate
# achieved, or the first copy's p99 above P99_LIMIT): per step the achieved
# rate and p50/p99 of the first copy of each update, and per point the
# highest rate served. The servers take turns, RUNS times; summary.md has
# one row per point and step.
#
#   bench/mapsubs.sh                  KEYS=100000, LATE=1000, SUBSCRIBERS=1000, RATE=50,100,...,1600, RUNS=3
#   KEYS=300 LATE=5 SUBSCRIBERS=5 RATE=20,40 STEP=1s RUNS=1 bench/mapsubs.sh   smoke
#   LATE=0 KEYS=1000 bench/mapsubs.sh only the update rate (no late readers)
#   ENGINE=redis bench/mapsubs.sh     the map in Redis (Centrifugo: its Redis engine)
#
# The late readers decode every page they read, 100 pages of 1,000 keys
# each at the defaults: Protobuf (the default FORMAT) keeps the load tool
# from being the bottleneck.
FORMAT=${FORMAT:-protobuf}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"

KEYS=${KEYS:-100000}
LATE=${LATE:-1000}
SUBSCRIBERS=${SUBSCRIBERS:-1000}
RATE=${RATE:-50,100,200,400,800,1600}
STEP=${STEP:-10s}
P99_LIMIT=${P99_LIMIT:-2s}
API_CONNS=${API_CONNS:-32}
PAGE_SIZE=${PAGE_SIZE:-1000}
PAYLOAD=${PAYLOAD:-64}
BATCH=${BATCH:-500}
FILL_CONC=${FILL_CONC:-4}
MAP_MODE=${MAP_MODE:-persistent}
KEY_TTL=${KEY_TTL:-1h}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-herald centrifugo}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$KEYS" =~ ^[1-9][0-9]*$ ]] || die "KEYS=$KEYS: want one positive count"
[[ "$ENGINE" != postgres ]] || die "ENGINE=postgres: Centrifugo's PostgreSQL broker is not compared here; use memory or redis"

# Persistent keys never expire; the other modes need a key_ttl.
ttl_yaml="" ttl_json=""
if [[ "$MAP_MODE" != persistent ]]; then
	ttl_yaml="
        key_ttl: $KEY_TTL"
	ttl_json=", \"key_ttl\": \"$KEY_TTL\""
fi
NODE_CHANNEL_YAML="  namespaces:
    - name: maps
      subscription_type: map
      allow_subscribe_for_client: true
      map:
        mode: $MAP_MODE
        max_page_size: $PAGE_SIZE$ttl_yaml"
CF_NAMESPACES_JSON='[{"name": "maps", "subscription_type": "map", "allow_subscribe_for_client": true, "map": {"mode": "'$MAP_MODE'", "max_page_size": '$PAGE_SIZE$ttl_json'}}]'

point() {
	local server=$1 run=$2 dir code=0
	point_start "$server" "$run" "$KEYS keys, $LATE late readers, $SUBSCRIBERS live subscribers at $RATE/s"
	dir=$POINT_DIR
	record_command timeout --signal=INT --kill-after=30 $((600 + KEYS / 100 + LATE)) "$BENCH" maps --json \
		--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
		--api "$(node_api 1)" --api-key "$API_KEY" --channel "maps:bench" \
		--keys "$KEYS" --payload "$PAYLOAD" --batch "$BATCH" --fill-concurrency "$FILL_CONC" --page-size "$PAGE_SIZE" \
		--late "$LATE" --subscribers "$SUBSCRIBERS" --rate "$RATE" --step "$STEP" --p99-limit "$P99_LIMIT" --api-conns "$API_CONNS" \
		--server-pid "$(node_pids)" >"$dir/maps.json" 2>"$dir/maps.log" || code=$?
	((code == 0)) || log "herald-bench exited with $code (see ${dir#"$ROOT"/}/maps.log)"
	stop_all
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$dir/" 2>/dev/null || true
	# Redis keeps persistent keys: delete the run's (its own prefixes).
	if [[ "$ENGINE" == redis ]]; then
		local addr=${SHARD_ADDRS[0]} pattern
		for pattern in "$ENGINE_SCHEMA*" "cf_bench_$$*"; do
			redis-cli -h "${addr%:*}" -p "${addr##*:}" --scan --pattern "$pattern" |
				xargs -r -n 500 redis-cli -h "${addr%:*}" -p "${addr##*:}" DEL >/dev/null || true
		done
	fi
	jq -r --arg s "$server" --arg r "$run" '
		def s: . / 1e9 * 100 | round / 100;
		def ms: . / 1e6 * 10 | round / 10;
		. as $p | (if (.updates // []) == [] then [{}] else .updates end)[] |
		"| \($s) | \($r) | \($p.keys) | \($p.fill_ns | s) | \($p.late.complete) of \($p.late.subscribers) | \($p.late.all_ns | s) | \($p.late.each.P50 | s) | \($p.late.each.P99 | s) | \($p.late.server_cpu | round) | \($p.subscribers) | \(.rate // "–") | \(.achieved_rate // 0 | round) | \(.first.P50 // 0 | ms) | \(.first.P99 // 0 | ms) | \(.missing // "–") | \(.publish_errors // "–") | \(if .served then "yes" elif .stopped then "no: \(.stopped)" else "no" end) | \($p.highest_rate_served) |"
	' "$dir/maps.json" >>"$RUN/summary.rows" 2>/dev/null ||
		echo "| $server | $run | failed: see points/$server-run$run/maps.log |" >>"$RUN/summary.rows"
}

start_run mapsubs
trap 'stop_all; stop_shards' EXIT
cf_prepare
echo "client format: $FORMAT, keys: $KEYS, late readers: $LATE, live subscribers: $SUBSCRIBERS, rates: $RATE/s for $STEP each (p99 limit $P99_LIMIT), map mode: $MAP_MODE, runs: $RUNS" >>"$RUN/machine.txt"
each_point point
{
	echo "Map subscriptions, engine $ENGINE, map mode $MAP_MODE, $KEYS keys (pages of $PAGE_SIZE), $FORMAT clients."
	echo
	echo "| server | run | keys | fill s | late readers with every key | all late readers live s | each p50 s | each p99 s | server CPU % while read | live subscribers | offered/s | achieved/s | first copy p50 ms | p99 ms | missing | errors | served | highest rate served |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	sort -t'|' -k2,2 -k3,3n -k12,12n "$RUN/summary.rows"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
