#!/usr/bin/env bash
# Overload: one node with its defaults, SUBSCRIBERS clients of one channel
# reading as fast as they can, 128-byte publications through the server
# API. herald-bench finds the node's capacity (the highest rate whose
# all-copies p99 stays within P99), publishes at FACTOR times it for
# DURATION, then at 100 msg/s for 10 one-second steps. It fails when a
# subscriber was closed, an accepted publication did not reach every
# subscriber, or latency had not recovered RECOVERY_LIMIT (10s) after the
# overload. On one machine that time is mostly the subscribers' own
# backlog: what waits in their socket buffers while the load tool, sharing
# the CPUs, reads it (the node's RSS stays flat, its queues are small).
#
#   bench/overload.sh                      capacity search, 2x for 30 s
#   CAPACITY=2000 bench/overload.sh        skip the search
#   ENGINE=redis bench/overload.sh         2 nodes: API on node 1, subscribers on node 2
#
# The nodes log at info (NODE_LOG_LEVEL), so that node<i>.log says which
# rule closed a client as slow ("client too slow", with its "why").
# Before the nodes start it waits (lib.sh's settle, at most SETTLE_MAX
# seconds) for a second in which the CPUs were less than SETTLE_BELOW busy,
# and records it in machine.txt; top.txt has the busiest processes every
# 5 s of the run.
NODE_LOG_LEVEL=${NODE_LOG_LEVEL:-info}
source "$(dirname "$0")/lib.sh"

SUBSCRIBERS=${SUBSCRIBERS:-500}
CAPACITY=${CAPACITY:-0}
FACTOR=${FACTOR:-2}
DURATION=${DURATION:-30s}
P99=${P99:-100ms}
RECOVERY_LIMIT=${RECOVERY_LIMIT:-10s}

start_run overload
# The machine before the run: a second in which the CPUs were less than 5%
# busy, waited for at most a minute, so that what the steps before left
# running (a test run's compiles, PostgreSQL's autovacuum) is on record and
# mostly done; and the busiest processes every 5 s while it runs (top.txt).
quiet=$(settle)
log "before the run: $quiet"
echo "before the run: $quiet" >>"$RUN/machine.txt"
sample_processes 600
start_node 1
sub_node=1
if multi_node_engine; then
	start_node 2
	sub_node=2
fi

record_command "$BENCH" overload \
	--url "$(node_url $sub_node)" --secret "$SECRET" --format "$FORMAT" \
	--subscribers "$SUBSCRIBERS" --channel overload \
	--api "$(node_api 1)" --api-key "$API_KEY" --api-conns 16 --batch 16 \
	--payload 128 --capacity "$CAPACITY" --p99 "$P99" --factor "$FACTOR" --duration "$DURATION" \
	--recovery-limit "$RECOVERY_LIMIT" --warmup 2s \
	--server-pid "$(node_pids)" \
	| tee "$RUN/overload.md"
rc=${PIPESTATUS[0]}
log "done: ${RUN#"$ROOT"/}"
exit "$rc"
