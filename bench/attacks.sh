#!/usr/bin/env bash
# The attacks of issue 35, replayed against one node (loopback only),
# each on a fresh node of its own, with a well-behaved client measured
# while it lasts (herald-bench attacks): the node's peak RSS, a fresh
# client's connect, subscribe and delivery times (p99 and max, every
# PROBE_INTERVAL), and whether a history subscriber got any publication
# twice or never. Targets (the issue's "done when"): memory bounded (RSS
# within RSS_GROWTH_LIMIT MiB of its level before the attack), no fresh
# client delayed by more than LATENCY_LIMIT, nothing twice or lost.
#
#   1 grpc-partial  GRPC_CONNS x GRPC_STREAMS unauthenticated streams to
#                   CentrifugoApi/Publish, each declaring GRPC_MESSAGE bytes
#                   and sending all but the last, held HOLD
#   2 noread        NOREAD_CLIENTS clients subscribe recovering RECENT
#                   publications of PAYLOAD bytes, ask history of RECENT,
#                   stop reading (HOLD); run twice: the node's defaults
#                   (writes detached), and client.wait_on_blocked_writes: true
#   3 mapkeys       one client sets distinct MAP_VALUE-byte keys as fast as it
#                   can, MAP_DURATION (namespace mode persistent, the default
#                   key bounds)
#   4 history-http, history-grpc  server API history with limit -1 on a channel
#                   of DEEP publications of PAYLOAD bytes, HISTORY_CONCURRENCY
#                   at once, HOLD
#
# Writes <attack>/ (the node's log and metrics, herald-bench's output),
# rows.jsonl and summary.md (the table).
#
#   bench/attacks.sh                                   the issue's sizes (several minutes)
#   HOLD=3s MAP_DURATION=2s NOREAD_CLIENTS=10 RECENT=10 DEEP=50 GRPC_STREAMS=5 \
#     ATTACKS="grpc-partial noread" bench/attacks.sh    smoke
source "$(dirname "$0")/lib.sh"

ATTACKS=${ATTACKS:-grpc-partial noread mapkeys history-http history-grpc}
HOLD=${HOLD:-30s}
MAP_DURATION=${MAP_DURATION:-10s}
GRPC_CONNS=${GRPC_CONNS:-4}
GRPC_STREAMS=${GRPC_STREAMS:-50}
GRPC_MESSAGE=${GRPC_MESSAGE:-4194304}
NOREAD_CLIENTS=${NOREAD_CLIENTS:-200}
RECENT=${RECENT:-100}
PAYLOAD=${PAYLOAD:-61440}
DEEP=${DEEP:-1000}
MAP_VALUE=${MAP_VALUE:-1024}
HISTORY_CONCURRENCY=${HISTORY_CONCURRENCY:-4}
PROBE_INTERVAL=${PROBE_INTERVAL:-200ms}
LEDGER_RATE=${LEDGER_RATE:-20}
LATENCY_LIMIT=${LATENCY_LIMIT:-100ms}
RSS_GROWTH_LIMIT=${RSS_GROWTH_LIMIT:-256}
[[ "$ENGINE" == memory ]] || die "ENGINE=$ENGINE: the attacks run on the memory engine (one node)"

GRPC_PORT=$((BASE_PORT + 50))
# ledger: the history subscriber's channel; attack: the channels the
# attacks read (history for recovery and history calls); keys: the map
# channel a client may fill.
NODE_CHANNEL_YAML="  namespaces:
    - name: ledger
      allow_subscribe_for_client: true
      history_size: 10000
      history_ttl: 10m
      allow_recovery: true
    - name: attack
      allow_subscribe_for_client: true
      allow_history_for_subscriber: true
      history_size: $((DEEP > RECENT ? DEEP : RECENT))
      history_ttl: 10m
      allow_recovery: true
    - name: keys
      subscription_type: map
      map:
        mode: persistent
        allow_publish_for_client: true"
GRPC_YAML="grpc_api:
  enabled: true
  address: 127.0.0.1
  port: $GRPC_PORT
  key: \"$API_KEY\""

# attack LABEL KIND [FLAG...]: a fresh node (with GRPC_YAML), the attack,
# the node stopped; its log, metrics and the output go to LABEL/.
attack() {
	local label=$1 kind=$2 dir code=0
	shift 2
	dir="$RUN/$label"
	mkdir -p "$dir"
	start_node 1 "$GRPC_YAML"
	log "$label: node pid ${NODE_PIDS[0]}"
	record_command timeout --signal=INT --kill-after=30 600 "$BENCH" attacks --attack "$kind" --label "$label" \
		--url "$(node_url 1)" --api "$(node_api 1)" --api-key "$API_KEY" --grpc "127.0.0.1:$GRPC_PORT" \
		--secret "$SECRET" --server-pid "$(node_pids)" \
		--probe-channel probe --probe-interval "$PROBE_INTERVAL" --ledger-channel ledger:attacks --ledger-rate "$LEDGER_RATE" \
		--latency-limit "$LATENCY_LIMIT" --rss-growth-limit "$RSS_GROWTH_LIMIT" --json "$@" \
		>"$dir/row.json" 2>"$dir/herald-bench.log" || code=$?
	((code == 0)) || log "$label: herald-bench exited with $code (see ${dir#"$ROOT"/}/herald-bench.log)"
	cat "$dir/row.json" >>"$RUN/rows.jsonl"
	stop_all
	mv "$RUN"/node1.log "$RUN"/node1.metrics.txt "$dir/" 2>/dev/null || true
}

start_run attacks
{
	echo "attacks: $ATTACKS; hold $HOLD, map keys $MAP_DURATION"
	echo "grpc-partial: $GRPC_CONNS x $GRPC_STREAMS streams of $GRPC_MESSAGE bytes; noread: $NOREAD_CLIENTS clients, $RECENT x $PAYLOAD bytes"
	echo "mapkeys: $MAP_VALUE-byte values; history: $DEEP x $PAYLOAD bytes, $HISTORY_CONCURRENCY at once"
	echo "probe every $PROBE_INTERVAL; history subscriber $LEDGER_RATE publications/s; targets: $LATENCY_LIMIT, +$RSS_GROWTH_LIMIT MiB"
} >>"$RUN/machine.txt"
: >"$RUN/rows.jsonl"
for a in $ATTACKS; do
	case "$a" in
	grpc-partial)
		attack grpc-partial grpc-partial --duration "$HOLD" \
			--grpc-conns "$GRPC_CONNS" --grpc-streams "$GRPC_STREAMS" --grpc-message "$GRPC_MESSAGE"
		;;
	noread)
		attack noread noread --duration "$HOLD" --channel attack:recent --prefill "$RECENT" --prefill-payload "$PAYLOAD" \
			--clients "$NOREAD_CLIENTS" --history-pull "$RECENT"
		# The same with the writers of the pool waiting for blocked
		# sockets, as before issue 35 #3 (start_node passes the
		# environment to herald serve).
		export HERALD_CLIENT_WAIT_ON_BLOCKED_WRITES=true
		echo "# noread-waiting: herald serve with HERALD_CLIENT_WAIT_ON_BLOCKED_WRITES=true" >>"$RUN/commands.txt"
		attack noread-waiting noread --duration "$HOLD" --channel attack:recent --prefill "$RECENT" --prefill-payload "$PAYLOAD" \
			--clients "$NOREAD_CLIENTS" --history-pull "$RECENT"
		unset HERALD_CLIENT_WAIT_ON_BLOCKED_WRITES
		;;
	mapkeys)
		attack mapkeys mapkeys --duration "$MAP_DURATION" --channel keys:flood --map-value "$MAP_VALUE"
		;;
	history-http | history-grpc)
		attack "$a" "$a" --duration "$HOLD" --channel attack:deep --prefill "$DEEP" --prefill-payload "$PAYLOAD" \
			--concurrency "$HISTORY_CONCURRENCY"
		;;
	*) die "ATTACKS: unknown attack $a (want grpc-partial noread mapkeys history-http history-grpc)" ;;
	esac
done
{
	echo "Issue 35's attacks on one node, engine $ENGINE ($(cut -d' ' -f1-3 /proc/loadavg) load at the end)."
	echo
	"$BENCH" attacks --report "$RUN/rows.jsonl"
} >"$RUN/summary.md"
cat "$RUN/summary.md"
log "done: ${RUN#"$ROOT"/}"
