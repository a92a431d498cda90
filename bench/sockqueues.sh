#!/usr/bin/env bash
# Where a backlog sits while a benchmark runs: every second for SECS seconds, the receive queue of
# every client socket connected to PORT (bytes received and not yet read by the load tool) and the
# send queue of every server socket on PORT, summed, and the node's herald_node_queued_bytes and
# herald_redis_dispatch_queue_depth from its /metrics on PORT.
#
#   bench/sockqueues.sh OUT SECS [PORT]    (PORT: 18202, node 2 of bench/sidebyside.sh)
#
# OUT gets one line per second and measure; OUT.conns the client sockets' receive queues one by one
# ("time local-port bytes"), to see whether the same connections stay behind.
set -euo pipefail
out=${1:?usage: sockqueues.sh OUT SECS [PORT]} secs=${2:?usage: sockqueues.sh OUT SECS [PORT]} port=${3:-18202}
: >"$out"
: >"$out.conns"
for ((i = 0; i < secs; i++)); do
	t=$(date +%s.%N)
	# With a state filter ss leaves the state column out: $1 is Recv-Q, $2 Send-Q, $3 local address.
	# One pass over the client sockets writes each to OUT.conns and their sum to OUT.
	ss -tnH state established "( dport = :$port )" | awk -v t="$t" -v port="$port" -v conns="$out.conns" '
		{k = split($3, a, ":"); print t, a[k], $1 >>conns; n++; s += $1; if ($1 > m) m = $1}
		END {printf "%s client_recv_q port=%s sockets=%d sum=%d max=%d\n", t, port, n, s, m}' >>"$out"
	ss -tnH state established "( sport = :$port )" | awk -v t="$t" '{n++; s += $2; if ($2 > m) m = $2}
		END {printf "%s server_send_q sockets=%d sum=%d max=%d\n", t, n, s, m}' >>"$out"
	{ curl -fsS --max-time 1 "http://127.0.0.1:$port/metrics" 2>/dev/null || true; } |
		grep -E '^herald_(node_queued_bytes|redis_dispatch_queue_depth)' | sed "s/^/$t /" >>"$out" || true
	sleep 1
done
