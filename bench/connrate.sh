#!/usr/bin/env bash
# New connections per second on one node, in the same shape as the floor's
# conns scenario (bench/floor.sh conns): N connections as fast as they go
# (--rate 0, 4 load-tool workers, 256 dials in flight each), each with a
# JWT and one subscription, so the result divides by the floor's directly.
#
#   bench/connrate.sh             19,000 connections
#   SOURCE=127.0.0.12 bench/connrate.sh
#
# Each run should dial from a source address of its own (SOURCE): the
# previous run's closed connections sit in TIME_WAIT on its ports.
source "$(dirname "$0")/lib.sh"

N=${N:-19000}
SOURCE=${SOURCE:-127.0.0.10}

start_run connrate
start_node 1
record_command "$BENCH" conns \
	--url "$(node_url 1)" --source "$SOURCE" --secret "$SECRET" --format "$FORMAT" \
	-n "$N" --rate 0 --workers 4 --dial-concurrency 256 --channels 1 --channel-prefix conns \
	--hold 5s --settle 3s --timeout 120s \
	--server-pid "$(node_pids)" | tee "$RUN/conns.txt"
log "done: ${RUN#"$ROOT"/}"
