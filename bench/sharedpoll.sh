#!/usr/bin/env bash
# Shared poll at scale, Herald beside Centrifugo: one node with a
# shared_poll namespace (versioned mode, refresh every INTERVAL) whose
# refresh proxy is herald-bench's own backend; N connections track
# KEYS_PER_CONN of KEYS keys each. Per point: the backend's refresh calls
# per interval and keys per call (each key should be asked once per
# interval, however many connections track it), then every key's version
# is raised and herald-bench waits for each tracking connection to get it:
# the time from the server's first poll of the new version to the last
# client, and from the raise itself (which adds the wait for the next
# poll). The servers take turns, RUNS times; summary.md has one row per
# point.
#
#   bench/sharedpoll.sh                             N=10000, KEYS=1000, RUNS=3 (about 3 minutes)
#   N=50 KEYS=10 RUNS=1 MEASURE=2s bench/sharedpoll.sh   smoke
#   ENGINE=redis NODES=2 bench/sharedpoll.sh        two nodes on one Redis (or ENGINE=postgres):
#                                                   the connections alternate between them, and
#                                                   each node polls the keys tracked on it, so the
#                                                   backend should see one call per key per node
#                                                   per interval
#
# One herald-bench process holds up to 19,000 connections (the open-files
# limit is 20,000 per process); N must stay below that.
FORMAT=${FORMAT:-json}
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cflib.sh"

N=${N:-10000}
KEYS=${KEYS:-1000}
KEYS_PER_CONN=${KEYS_PER_CONN:-1}
INTERVAL=${INTERVAL:-1s}
MEASURE=${MEASURE:-5s}
WAIT=${WAIT:-30s}
RUNS=${RUNS:-3}
SERVERS=${SERVERS:-herald centrifugo}
NODES=${NODES:-1}
CLIENT=${CLIENT:-heavy}
POLL_SECRET=bench-poll-secret
BACKEND="127.0.0.1:$((BASE_PORT + 190))"
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || die "RUNS=$RUNS: want 1 to 99"
[[ "$N" =~ ^[1-9][0-9]*$ ]] && ((N <= 19000)) || die "N=$N: want 1 to 19,000 (one load process)"
[[ "$NODES" == 1 || "$NODES" == 2 ]] || die "NODES=$NODES: want 1 or 2"
[[ "$NODES" == 1 || "$ENGINE" != memory ]] || die "NODES=2 needs an engine the nodes share: ENGINE=redis or ENGINE=postgres"

NODE_CHANNEL_YAML="  namespaces:
    - name: poll
      subscription_type: shared_poll
      allow_subscribe_for_client: true
      shared_poll:
        proxy_name: poll_backend
        mode: versioned
        refresh_interval: $INTERVAL"
NODE_EXTRA_YAML="shared_poll:
  hmac_secret_key: \"$POLL_SECRET\"
proxies:
  - name: poll_backend
    endpoint: http://$BACKEND/"
CF_NAMESPACES_JSON='[{"name": "poll", "subscription_type": "shared_poll", "allow_subscribe_for_client": true, "shared_poll": {"proxy_name": "poll_backend", "mode": "versioned", "refresh_interval": "'$INTERVAL'"}}]'
CF_EXTRA_JSON='"shared_poll": {"hmac_secret_key": "'$POLL_SECRET'"}, "proxies": [{"name": "poll_backend", "endpoint": "http://'$BACKEND'/"}]'

point() {
	local server=$1 run=$2 dir code=0
	point_start "$server" "$run" "$N connections tracking $KEYS_PER_CONN of $KEYS keys on $NODES node(s)" "$NODE_EXTRA_YAML"
	dir=$POINT_DIR
	local -a urls=(--url "$(node_url 1)")
	if ((NODES == 2)); then
		if [[ "$server" == centrifugo ]]; then start_cf_node 2; else start_node 2 "$NODE_EXTRA_YAML"; fi
		urls+=(--url "$(node_url 2)")
	fi
	record_command timeout --signal=INT --kill-after=30 $((240 + N / 200)) "$BENCH" sharedpoll --client "$CLIENT" \
		"${urls[@]}" --secret "$SECRET" --format "$FORMAT" --poll-secret "$POLL_SECRET" \
		-n "$N" --keys "$KEYS" --keys-per-conn "$KEYS_PER_CONN" --channel poll:bench --backend "$BACKEND" \
		--interval "$INTERVAL" --measure "$MEASURE" --wait "$WAIT" >"$dir/sharedpoll.txt" 2>&1 || code=$?
	((code == 0)) || log "herald-bench exited with $code (see ${dir#"$ROOT"/}/sharedpoll.txt)"
	stop_all
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$dir/" 2>/dev/null || true
	awk -v s="$server" -v r="$run" '
		# grab RE: the text of the first match of RE in the line, less its
		# last word (the unit or label that anchors it).
		function grab(re) { if (!match($0, re)) return "?"; v = substr($0, RSTART, RLENGTH); sub(/ [^ ]+$/, "", v); return v }
		/^connections:/ { conn = $2 }
		/^backend:/ { calls = $2; keys = grab("[0-9.]+ keys per") ; sub(/ keys$/, "", keys) }
		/^version change:/ {
			got = grab("[0-9]+ of [0-9]+ tracked"); p50 = grab("p50 [0-9.]+ ms"); p99 = grab("p99 [0-9.]+ ms")
			last = grab("last [0-9.]+ ms;"); raise = grab("backend: last [0-9.]+ ms")
			sub(/^p50 /, "", p50); sub(/^p99 /, "", p99); sub(/^last /, "", last); sub(/^backend: last /, "", raise)
		}
		END { printf "| %s | %d | %s | %s | %s | %s | %s ms | %s ms; %s ms | %s ms |\n", s, r, conn, calls, keys, got, p50, p99, last, raise }
' "$dir/sharedpoll.txt" >>"$RUN/summary.rows"
}

cleanup_poll() {
	stop_all
	stop_shards
}

start_run sharedpoll
trap cleanup_poll EXIT
cf_prepare
echo "client: $CLIENT, connections: $N, keys: $KEYS ($KEYS_PER_CONN per connection), refresh interval: $INTERVAL, nodes: $NODES, runs: $RUNS" >>"$RUN/machine.txt"
each_point point
{
	echo "Shared poll, $N connections tracking $KEYS_PER_CONN of $KEYS keys each, refresh every $INTERVAL, $CLIENT clients ($FORMAT), $NODES node(s), engine $ENGINE."
	echo
	echo "| server | run | connections | refresh calls per interval | keys per call | got the change | p50 from the server's poll | p99; last | last from the change |"
	echo "|---|---|---|---|---|---|---|---|---|"
	sort "$RUN/summary.rows"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
