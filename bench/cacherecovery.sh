#!/usr/bin/env bash
# Cache recovery at scale, Herald beside Centrifugo: one node with a
# namespace in cache recovery mode (history_size 1, force_recovery,
# force_recovery_mode cache, auto_cache_recover), one publication (the
# latest value), then N subscribers connecting and subscribing at once
# (herald-bench conns --rate 0), each getting that publication in its
# subscribe reply. Per point: how long the N took (the ramp), connections
# per second, how many publications the subscribe replies carried (N when
# every subscriber recovered; the sdk client does not count them, the SDK
# hands them to its publication handler), and the server's CPU; the servers take
# turns, RUNS times. Writes points/<server>-run<k>/conns.txt and
# summary.md.
#
#   bench/cacherecovery.sh                          N=1000, RUNS=3, heavy clients (about 1 minute)
#   N=20 RUNS=1 bench/cacherecovery.sh              smoke
#   ENGINE=redis bench/cacherecovery.sh             the history in Redis (Centrifugo: its Redis engine)
#
# N above 19,000 is spread over several load processes by herald-bench
# itself (--per-worker, under the open-files limit of 20,000 per process).
FORMAT=${FORMAT:-json}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"

N=${N:-1000}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-herald centrifugo}
CLIENT=${CLIENT:-heavy}
HOLD=${HOLD:-2s}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "N=$N: want a positive count"
[[ "$ENGINE" != postgres ]] || die "ENGINE=postgres: Centrifugo's PostgreSQL broker is not compared here; use memory or redis"

NODE_CHANNEL_YAML='  namespaces:
    - name: prices
      allow_subscribe_for_client: true
      history_size: 1
      history_ttl: 1h
      force_recovery: true
      force_recovery_mode: cache
      auto_cache_recover: true'
CF_NAMESPACES_JSON='[{"name": "prices", "allow_subscribe_for_client": true, "history_size": 1, "history_ttl": "1h", "force_recovery": true, "force_recovery_mode": "cache", "auto_cache_recover": true}]'
CHANNEL=prices:p0

# publish_latest publishes the value every subscriber should recover.
publish_latest() {
	curl -fsS --max-time 10 -H "X-API-Key: $API_KEY" -H 'Content-Type: application/json' \
		-d "{\"channel\": \"$CHANNEL\", \"data\": {\"price\": 42}}" "$(node_api 1)/publish" >/dev/null ||
		die "publish to $CHANNEL failed"
}

point() {
	local server=$1 run=$2 dir code=0
	point_start "$server" "$run" "$N subscribers at once"
	dir=$POINT_DIR
	publish_latest
	record_command timeout --signal=INT --kill-after=30 $((180 + N / 500)) "$BENCH" conns --client "$CLIENT" \
		--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
		-n "$N" --rate 0 --channels 1 --channel-prefix prices:p --hold "$HOLD" --settle 1s \
		--server-pid "$(node_pids)" --timeout $((120 + N / 500))s >"$dir/conns.txt" 2>&1 || code=$?
	((code == 0)) || log "herald-bench exited with $code (see ${dir#"$ROOT"/}/conns.txt)"
	stop_all
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$dir/" 2>/dev/null || true
	awk -v s="$server" -v r="$run" -v n="$N" '
		/^connections:/ { for (i = 1; i <= NF; i++) if ($i == "connected") conn = $(i + 1) }
		/^ramp:/ { ramp = $2; sub(",", "", ramp); rate = $3 }
		/recovered\): / { rec = $NF }
		/CPU [0-9]+% while holding/ { match($0, /CPU [0-9]+%/); cpu = substr($0, RSTART + 4, RLENGTH - 4) }
		END { printf "| %s | %d | %s | %s | %s | %s of %s | %s |\n", s, r, conn + 0, ramp, rate, rec + 0, n, cpu }
	' "$dir/conns.txt" >>"$RUN/summary.rows"
}

cleanup_cache() {
	stop_all
	cf_schema_drop
	stop_shards
}

start_run cacherecovery
trap cleanup_cache EXIT
cf_prepare
echo "client: $CLIENT, subscribers: $N at once, runs: $RUNS" >>"$RUN/machine.txt"
each_point point
{
	echo "Cache recovery, $N subscribers at once, engine $ENGINE, $CLIENT clients ($FORMAT)."
	echo
	echo "| server | run | connected | all subscribed in | connections/s | latest publication recovered | server CPU while holding |"
	echo "|---|---|---|---|---|---|---|"
	sort "$RUN/summary.rows"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
