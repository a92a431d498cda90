#!/usr/bin/env bash
# Scenario 2: 100,000 idle connections (each connected with a JWT and
# subscribed to one shared channel), spread over several nodes of at most
# ~17,000 connections each (one process may hold 20,000 open files here),
# and the servers' RSS per connection from /proc.
#
#   bench/idle.sh                 100,000 connections over 6 nodes
#   bench/idle.sh --quick         10,000 connections on 1 node
#   N=19000 NODES=1 bench/idle.sh the targets' "19,000 connections on one node" row
source "$(dirname "$0")/lib.sh"

N=${N:-100000}
NODES=${NODES:-6}
RATE=${RATE:-5000}
HOLD=${HOLD:-30s}
if [[ "${1:-}" == "--quick" ]]; then
	N=10000 NODES=1 HOLD=5s
fi
(((N + NODES - 1) / NODES <= 19500)) || die "$N connections over $NODES nodes is more than one process can hold here (20,000 open files): raise NODES"

start_run idle
urls=()
for i in $(seq "$NODES"); do
	start_node "$i"
	urls+=("$(node_url "$i")")
done
# Ephemeral ports: ~28,000 per source address and destination; IP_BIND_ADDRESS_NO_PORT
# lets destinations share them, so one source per 20,000 connections is plenty.
sources="127.0.0.1-127.0.0.$((N / 20000 + 1))"
sample_kernel
IFS=,
record_command "$BENCH" conns \
	--url "${urls[*]}" --source "$sources" --secret "$SECRET" --format "$FORMAT" \
	-n "$N" --rate "$RATE" --channels 1 --channel-prefix idle \
	--hold "$HOLD" --settle 5s --timeout 10m \
	--server-pid "$(node_pids)" | tee "$RUN/conns.txt"
unset IFS
kernel_peak | tee -a "$RUN/conns.txt"
log "done: ${RUN#"$ROOT"/}"
