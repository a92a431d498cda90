#!/usr/bin/env bash
# Tags filters at scale, Herald beside Centrifugo: one node with a
# namespace that allows tags filters; herald-bench tags connects N
# subscribers to one channel, subscriber i with the filter f == v<i mod
# FILTERS>, and publishes through the server API at RATE for STEP,
# publication j tagged f = v<j mod FILTERS>, so that the server matches
# every publication against FILTERS distinct filters. Per point: copies
# expected, received and wrongly delivered (a filter not applied),
# publish-to-receive p50/p99, and the server's CPU while publishing; the
# servers take turns, RUNS times. Writes points/<server>-run<k>/tags.json
# and summary.md.
#
#   bench/tagsfilter.sh                     N=1000, FILTERS=1000, RATE=1000, RUNS=3 (about 2 minutes)
#   N=20 FILTERS=10 RATE=50 STEP=1s RUNS=1 bench/tagsfilter.sh   smoke
#   ENGINE=redis bench/tagsfilter.sh        publications through Redis (Centrifugo: its Redis engine)
#
# One herald-bench process holds up to 19,000 connections (the open-files
# limit is 20,000 per process); N must stay below that.
FORMAT=${FORMAT:-json}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"

N=${N:-1000}
FILTERS=${FILTERS:-1000}
RATE=${RATE:-1000}
STEP=${STEP:-10s}
API_CONNS=${API_CONNS:-16}
PAYLOAD=${PAYLOAD:-128}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-herald centrifugo}
CLIENT=${CLIENT:-heavy}
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$N" =~ ^[1-9][0-9]*$ ]] && ((N <= 19000)) || die "N=$N: want 1 to 19,000 (one load process)"
[[ "$FILTERS" =~ ^[1-9][0-9]*$ ]] || die "FILTERS=$FILTERS: want a positive count"
[[ "$CLIENT" != sdk ]] || die "CLIENT=sdk: herald-bench tags takes light or heavy"
[[ "$ENGINE" != postgres ]] || die "ENGINE=postgres: Centrifugo's PostgreSQL broker is not compared here; use memory or redis"

NODE_CHANNEL_YAML='  namespaces:
    - name: tags
      allow_subscribe_for_client: true
      allow_tags_filter: true'
CF_NAMESPACES_JSON='[{"name": "tags", "allow_subscribe_for_client": true, "allow_tags_filter": true}]'

point() {
	local server=$1 run=$2 dir code=0
	point_start "$server" "$run" "$N subscribers, $FILTERS filters, $RATE/s"
	dir=$POINT_DIR
	record_command timeout --signal=INT --kill-after=30 $((180 + N / 200)) "$BENCH" tags --json --client "$CLIENT" \
		--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
		--subscribers "$N" --filters "$FILTERS" --channel tags:bench \
		--api "$(node_api 1)" --api-key "$API_KEY" --api-conns "$API_CONNS" \
		--rate "$RATE" --step "$STEP" --payload "$PAYLOAD" \
		--server-pid "$(node_pids)" >"$dir/tags.json" 2>"$dir/tags.log" || code=$?
	((code == 0)) || log "herald-bench exited with $code (see ${dir#"$ROOT"/}/tags.log)"
	stop_all
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$dir/" 2>/dev/null || true
	jq -r --arg s "$server" --arg r "$run" '
		.summary | def ms: . / 1e6 * 10 | round / 10;
		"| \($s) | \($r) | \(.connected) | \(.sent) | \(.achieved_rate | round) | \(.received) of \(.expected) | \(.wrong) | \(.latency.P50 | ms) | \(.latency.P99 | ms) | \(.server_cpu | round) | \(.bench_cpu | round) |"
	' "$dir/tags.json" >>"$RUN/summary.rows" 2>/dev/null ||
		echo "| $server | $run | failed: see points/$server-run$run/tags.log |" >>"$RUN/summary.rows"
}

start_run tagsfilter
trap 'stop_all; stop_shards' EXIT
cf_prepare
echo "client: $CLIENT ($FORMAT), subscribers: $N, distinct filters: $FILTERS, rate: $RATE/s for $STEP, runs: $RUNS" >>"$RUN/machine.txt"
each_point point
{
	echo "Tags filters, $N subscribers with $FILTERS distinct filters, publications at $RATE/s for $STEP, engine $ENGINE, $CLIENT clients ($FORMAT)."
	echo
	echo "| server | run | subscribers | publications | achieved/s | copies received | wrongly delivered | p50 ms | p99 ms | server CPU % | bench CPU % |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	sort "$RUN/summary.rows"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
