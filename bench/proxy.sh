#!/usr/bin/env bash
# The proxy's cost: connects per second through the connect proxy against a
# minimal backend on loopback (the express application of the tests,
# tests/js/lib/proxybackend.mjs, answering at once), next to connects with
# a JWT; and the round trip of a proxied subscribe next to a plain one. One
# node; run it on a quiet machine.
#
#   bench/proxy.sh            2,000 connects (50 in flight), 500 subscribes of each kind
#   bench/proxy.sh --quick    300 connects, 100 subscribes
#
# Needs node and `npm ci` in tests/js. CONNECTS, CONCURRENCY, SUBSCRIBES
# override the sizes.
source "$(dirname "$0")/lib.sh"

CONNECTS=${CONNECTS:-2000}
CONCURRENCY=${CONCURRENCY:-50}
SUBSCRIBES=${SUBSCRIBES:-500}
if [[ "${1:-}" == "--quick" ]]; then
	CONNECTS=300 SUBSCRIBES=100
fi
JS="$ROOT/tests/js"
[[ -d "$JS/node_modules/express" ]] || die "run npm ci in tests/js first"

start_run proxy

# The backend: its own process, stopped with the nodes.
BACKEND_OUT="$WORK/backend.out"
rm -f "$BACKEND_OUT"
node "$JS/lib/proxybackend.mjs" >"$BACKEND_OUT" 2>"$RUN/backend.log" &
BACKEND_PID=$!
trap 'kill -TERM "$BACKEND_PID" 2>/dev/null || true; stop_all; stop_shards' EXIT
BACKEND_PORT=""
for _ in $(seq 100); do
	BACKEND_PORT=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$BACKEND_OUT" 2>/dev/null)
	[[ -n "$BACKEND_PORT" ]] && break
	kill -0 "$BACKEND_PID" 2>/dev/null || die "the backend exited: see ${RUN#"$ROOT"/}/backend.log"
	sleep 0.1
done
[[ -n "$BACKEND_PORT" ]] || die "the backend did not start"
ENDPOINT="http://127.0.0.1:$BACKEND_PORT/centrifugo"
log "backend: pid $BACKEND_PID, $ENDPOINT"

# The node: lib.sh's start_node has a fixed client section, so this
# scenario writes its own configuration.
PORT=$(node_port 1)
CFG="$WORK/node1.yaml"
cat >"$CFG" <<YAML
address: "127.0.0.1:$PORT"
name: "bench-proxy"
log:
  level: warn
$(engine_yaml)
proxies:
  - name: connect
    endpoint: "$ENDPOINT/connect"
    timeout: 5s
  - name: subscribe
    endpoint: "$ENDPOINT/subscribe"
    timeout: 5s
client:
  token:
    hmac_secret_key: "$SECRET"
  proxy:
    connect: connect
channel:
  namespaces:
    - name: px
      subscribe_proxy: subscribe
    - name: plain
      allow_subscribe_for_client: true
websocket:
  ip_rate_limit: -1
shutdown:
  drain_window: 1s
  timeout: 10s
YAML
"$BIN" config check "$CFG" >&2 || die "this herald does not accept the proxy configuration"
env -u HERALD_SERVICES_PG_PORT -u HERALD_SERVICES_REDIS_PORT -u HERALD_SERVICES_NATS_PORT \
	"$BIN" serve -c "$CFG" >"$RUN/node1.log" 2>&1 &
NODE_PIDS+=("$!")
NODE_PORTS+=("$PORT")
for _ in $(seq 100); do
	curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
	kill -0 "${NODE_PIDS[0]}" 2>/dev/null || die "the node exited: see ${RUN#"$ROOT"/}/node1.log"
	sleep 0.1
done
log "node: pid ${NODE_PIDS[0]}, port $PORT, engine $ENGINE"

record_command node "$JS/lib/proxybackend-bench.mjs" --url "$(node_url 1)" --secret "$SECRET" \
	--connects "$CONNECTS" --concurrency "$CONCURRENCY" --subscribes "$SUBSCRIBES" | tee "$RUN/proxy.md"
log "done: ${RUN#"$ROOT"/}"
