#!/usr/bin/env bash
# Transports side by side, one node on the memory engine: the server's RSS
# per idle connection, and fan-out latency of every copy, for WebSocket,
# HTTP-streaming and SSE clients (bench/transports/main.go).
#
#   bench/transports.sh            5,000 idle connections; 1,000 subscribers x 100 publications at 20/s
#   N=2000 SUBS=500 bench/transports.sh
source "$(dirname "$0")/lib.sh"

N=${N:-5000}
SUBS=${SUBS:-1000}
PUBS=${PUBS:-100}
RATE=${RATE:-20}

start_run transports
TOOL="$ROOT/.tmp/bin/bench-transports"
(cd "$ROOT/bench" && go build -o "$TOOL" ./transports)
for transport in websocket http_stream sse; do
	start_node 1
	pid=${NODE_PIDS[0]}
	record_command "$TOOL" -node "http://127.0.0.1:$(node_port 1)" -transport "$transport" -mode idle \
		-n "$N" -pid "$pid" -secret "$SECRET" | tee -a "$RUN/transports.txt"
	stop_all
	start_node 1
	record_command "$TOOL" -node "http://127.0.0.1:$(node_port 1)" -transport "$transport" -mode fanout \
		-n "$SUBS" -pubs "$PUBS" -rate "$RATE" -secret "$SECRET" -api-key "$API_KEY" | tee -a "$RUN/transports.txt"
	stop_all
done
log "done: ${RUN#"$ROOT"/}"
