#!/usr/bin/env bash
# Map subscriptions: for each size of KEYS, one node fills a map channel
# through its server API (batches of map_publish), one fresh subscriber reads
# the whole snapshot (pages of the namespace's max_page_size) and goes live,
# then SUBSCRIBERS live subscribers receive map_publish updates to random keys
# at RATE for STEP. Per size: fill time, the node's RSS before and after the
# fill, the engine store's growth (PostgreSQL: pg_total_relation_size of the
# run's schema; Redis: INFO used_memory), snapshot time, and p50/p99 of the
# first copy of each update.
#
#   bench/maps.sh                                  memory engine, 10,000 and 1,000,000 keys
#   ENGINE=postgres bench/maps.sh
#   ENGINE=redis KEYS=10000 RATE=500 bench/maps.sh
#   MAP_MODE=recoverable KEY_TTL=1h bench/maps.sh  another map mode (persistent by default)
source "$(dirname "$0")/lib.sh"

KEYS=${KEYS:-10000,1000000}
RATE=${RATE:-200}
STEP=${STEP:-30s}
SUBSCRIBERS=${SUBSCRIBERS:-10}
PAGE_SIZE=${PAGE_SIZE:-1000}
PAYLOAD=${PAYLOAD:-64}
BATCH=${BATCH:-500}
FILL_CONC=${FILL_CONC:-4}
MAP_MODE=${MAP_MODE:-persistent}
KEY_TTL=${KEY_TTL:-1h}

start_run "maps-$ENGINE"
# The map namespace; persistent keys never expire, the other modes need a key_ttl.
ttl_yaml=""
[[ "$MAP_MODE" != persistent ]] && ttl_yaml="        key_ttl: $KEY_TTL"
NODE_CHANNEL_YAML=$(printf '  namespaces:\n    - name: maps\n      subscription_type: map\n      allow_subscribe_for_client: true\n      map:\n        mode: %s\n        max_page_size: %d\n%s\n' \
	"$MAP_MODE" "$PAGE_SIZE" "$ttl_yaml")
start_node 1

# store_cmd prints a shell command that prints the engine store's size in bytes.
store_cmd() {
	case "$ENGINE" in
	postgres)
		printf '%q ' psql -At "${SHARD_DSNS[0]}" -c \
			"SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$ENGINE_SCHEMA' AND c.relkind IN ('r', 'p', 'm')"
		;;
	redis)
		local addr=${SHARD_ADDRS[0]}
		printf "redis-cli -h %q -p %q INFO memory | tr -d '\\\\r' | awk -F: '\$1 == \"used_memory\" { print \$2 }'" "${addr%:*}" "${addr##*:}"
		;;
	esac
}

status=0
record_command "$BENCH" maps \
	--url "$(node_url 1)" --secret "$SECRET" --format "$FORMAT" \
	--api "$(node_api 1)" --api-key "$API_KEY" --channel "maps:bench" \
	--keys "$KEYS" --payload "$PAYLOAD" --batch "$BATCH" --fill-concurrency "$FILL_CONC" \
	--page-size "$PAGE_SIZE" --subscribers "$SUBSCRIBERS" --rate "$RATE" --step "$STEP" \
	--server-pid "$(node_pids)" --store-cmd "$(store_cmd)" \
	| tee "$RUN/maps.md" || status=$?

# Persistent map keys carry no TTL: delete the run's Redis keys (its own
# prefix) once the node has stopped. PostgreSQL's schema is dropped by stop_all.
stop_all
if [[ "$ENGINE" == redis ]]; then
	for addr in "${SHARD_ADDRS[@]:0:$SHARDS_N}"; do
		redis-cli -h "${addr%:*}" -p "${addr##*:}" --scan --pattern "$ENGINE_SCHEMA:*" |
			xargs -r -n 500 redis-cli -h "${addr%:*}" -p "${addr##*:}" DEL >/dev/null
	done
fi
log "done: ${RUN#"$ROOT"/}"
exit "$status"
