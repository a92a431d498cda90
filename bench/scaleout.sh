#!/usr/bin/env bash
# The scale-out curve: how much one PostgreSQL carries. For each K of NODES,
# K Herald nodes (processes on this machine) share one database, with
# SUBS_PER_NODE subscribers of one channel on each (MAX_SUBS in all at
# most), plus one more node with no subscribers at all (the "idle" node).
# Publications go through node 1's server API at each rate of RATES for
# STEP. Per K and rate the run records:
#
#   - PostgreSQL CPU per publication: utime+stime of the postmaster and all
#     its children from /proc (PostgreSQL must run on this machine; the
#     column says n/a otherwise), minus the same processes' idle rate
#     measured for BASELINE seconds before each K's first rate;
#   - records read by the nodes' listeners per second (all nodes,
#     herald_postgres_listener_lag_seconds_count) and copies delivered to
#     clients per second (herald-bench);
#   - end-to-end p99 (herald-bench, every copy, subscribers on all K nodes);
#   - the idle node's CPU per publication (it LISTENs like every node, so it
#     receives and decodes every notification and drops the records), and
#     node 1's for comparison (it also serves the API and fans out);
#   - the load average, since the machine is shared with the load generator.
#
# After the curve a probe (PROBE=1) measures two PostgreSQL facts the
# curve's reading depends on, with pgbench: how much a backend that LISTENs
# on an unrelated channel is woken by each notifying commit, and what one
# LISTEN + UNLISTEN pair costs the server.
#
#   bench/scaleout.sh                                       the full curve (~5 min)
#   NODES="1 2" RATES=200 STEP=3s bench/scaleout.sh         a smoke run
#   BENCH_POSTGRES_DSN=postgres://… bench/scaleout.sh       a PostgreSQL of its own
#   SHARDS=1,2 bench/scaleout.sh                            the curve on 1 and 2 shards
#   ENGINE=redis SHARDS=1,2 bench/scaleout.sh               the same on Redis
#   PG_SHARD_CLUSTERS=private SHARDS=1,2,4 bench/scaleout.sh  1, 2 and 4 PostgreSQL clusters of the run's own
#   ENGINE=redis SHARDS=1,2,4 bench/scaleout.sh             1, 2 and 4 Redis servers of the run's own
#
# Shards (SHARDS, a comma-separated list of shard counts; lib.sh says where
# the shards are). PostgreSQL: the clusters of BENCH_POSTGRES_SHARD_DSNS, or
# when it (or the test services' two) gives fewer than the largest count,
# or with PG_SHARD_CLUSTERS=private, private clusters the run starts (one
# initdb per shard on BASE_PORT+950+i, stopped and deleted at exit); for a
# comparison of counts use private, so that every count runs on alike
# clusters. Redis: with a largest count above 1, every shard is a
# redis-server of the run's own. With N shards, N herald-bench processes run at once,
# each on a channel of its own shard at rate/N with subscribers/N, so that
# the load spreads over the shards as many channels would; achieved rates
# and copies are summed, p99 is the largest of the N. "store CPU" is then
# the CPU of every shard's server processes together (PostgreSQL
# postmasters and their children, or redis-server), on this machine. With
# ENGINE=redis the listener columns are empty and there is no probe.
#
# Environment (defaults): NODES ("1 2 4 8 16"), RATES (500,2000),
# SUBS_PER_NODE (200), MAX_SUBS (3200), STEP (10s), WARMUP (3s), BASELINE
# (3, seconds of idle measurement per K), API_CONNS (32), PROBE (1),
# PROBE_SECS (5), PROBE_LISTENERS (8), and lib.sh's BASE_PORT, RESULTS,
# FORMAT, HISTORY, BENCH_POSTGRES_DSN, BENCH_POSTGRES_SHARD_DSNS,
# PG_SHARD_CLUSTERS, PG_SHARD_BIN, PG_SHARD_MAX_CONNECTIONS. The probe runs
# on the first shard.
#
# Writes scaleout.md (the table), probe.md, the herald-bench CSVs and every
# node's log and final metrics (kN/) into the run folder.
ENGINE=${ENGINE:-postgres}
[[ "$ENGINE" == postgres || "$ENGINE" == redis ]] || die "ENGINE=$ENGINE: want postgres or redis"
IFS=, read -r -a SHARD_LIST <<<"${SHARDS:-1}"
SHARDS=1
for n in "${SHARD_LIST[@]}"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: SHARDS: want positive integers, got $n" >&2; exit 1; }
	((n > SHARDS)) && SHARDS=$n
done
source "$(dirname "$0")/lib.sh"

NODES=${NODES:-1 2 4 8 16}
RATES=${RATES:-500,2000}
SUBS_PER_NODE=${SUBS_PER_NODE:-200}
MAX_SUBS=${MAX_SUBS:-3200}
STEP=${STEP:-10s}
WARMUP=${WARMUP:-3s}
BASELINE=${BASELINE:-3}
API_CONNS=${API_CONNS:-32}
PROBE=${PROBE:-1}
PROBE_SECS=${PROBE_SECS:-5}
PROBE_LISTENERS=${PROBE_LISTENERS:-8}
CLK_TCK=$(getconf CLK_TCK)

secs() { # "10s" or "10" -> 10
	local v=${1%s}
	[[ "$v" =~ ^[0-9]+$ ]] || die "want whole seconds, got $1"
	echo "$v"
}
STEP_S=$(secs "$STEP")
WARMUP_S=$(secs "$WARMUP")
# herald-bench connects, warms up, runs one step and waits for late copies;
# anything beyond this is a hang, and the run moves on.
RUN_TIMEOUT=$((STEP_S + WARMUP_S + 90))

# ticks PID [WITH_CHILDREN]: utime+stime of a process in clock ticks (0 when
# it is gone); with a second argument also the time of its reaped children.
ticks() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || {
		echo 0
		return
	}
	# Fields after "(comm) ": state is the 1st, utime the 12th, stime the
	# 13th, cutime and cstime the 14th and 15th.
	read -r -a f <<<"${s##*) }"
	if [[ -n "${2:-}" ]]; then
		echo $((f[11] + f[12] + f[13] + f[14]))
	else
		echo $((f[11] + f[12]))
	fi
}

# The store's server processes: for PostgreSQL the postmaster of a
# cluster, the parent of any backend; for Redis the redis-server. Empty
# when a server is not visible in /proc here. PG_MASTER is the first
# shard's (the probe's), STORE_PIDS every shard's.
PG_MASTER=""
STORE_PIDS=()
find_postmaster() { # DSN: prints the postmaster's pid, if it is here
	local cp s ppid
	# The checkpointer lives as long as the server and any role sees its pid.
	cp=$(psql -Atq "$1" -c "select pid from pg_stat_activity where backend_type = 'checkpointer'" 2>/dev/null) || return 0
	s=$(cat "/proc/$cp/stat" 2>/dev/null) || return 0
	read -r _ ppid _ <<<"${s##*) }"
	if [[ "$(cat "/proc/$ppid/comm" 2>/dev/null)" =~ ^(postgres|postmaster)$ ]]; then
		echo "$ppid"
	fi
}
find_redis() { # HOST:PORT: prints the redis-server's pid, if it is here
	local pid
	pid=$(redis-cli -h "${1%:*}" -p "${1##*:}" info server 2>/dev/null | awk -F: '/^process_id:/ {print $2}' | tr -d '\r')
	[[ -n "$pid" && -e "/proc/$pid" ]] && echo "$pid"
	return 0
}
# find_stores N: STORE_PIDS of the first N shards; empty unless all are here.
find_stores() {
	local i pid
	STORE_PIDS=()
	for ((i = 0; i < $1; i++)); do
		if [[ "$ENGINE" == postgres ]]; then
			pid=$(find_postmaster "${SHARD_DSNS[$i]}")
		else
			pid=$(find_redis "${SHARD_ADDRS[$i]}")
		fi
		[[ -n "$pid" ]] || {
			STORE_PIDS=()
			return
		}
		STORE_PIDS+=("$pid")
	done
}

# pg_ticks: CPU of the stores' server processes, their live children and
# those they reaped.
pg_ticks() {
	local t=0 c m
	for m in "${STORE_PIDS[@]}"; do
		t=$((t + $(ticks "$m" children)))
		for c in $(pgrep -P "$m"); do
			t=$((t + $(ticks "$c")))
		done
	done
	echo "$t"
}

# metric_sum PORT REGEX: the sum of a node's herald_* samples whose name and
# labels match REGEX (0 when the node does not answer).
metric_sum() {
	{ curl -fsS --max-time 5 "http://127.0.0.1:$1/metrics" 2>/dev/null || true; } |
		awk -v re="$2" '$1 ~ re {s += $2} END {printf "%.0f\n", s}'
}
# nodes_sum FROM TO REGEX: metric_sum over nodes FROM..TO.
nodes_sum() {
	local i s=0
	for ((i = $1; i <= $2; i++)); do
		s=$((s + $(metric_sum "$(node_port "$i")" "$3")))
	done
	echo "$s"
}

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }
csv_col() { # FILE COLUMN-NAME: the column's value in the first data row
	awk -F, -v name="$2" 'NR==1 {for (i = 1; i <= NF; i++) if ($i == name) c = i} NR==2 {print $c}' "$1"
}

# probe_session NAME SQL: an idle session that ran SQL and stays open, fed
# by a FIFO whose writer sleeps after the statement; appends its backend pid
# to PROBE_LISTEN. (Not run in a command substitution: the pids of psql and
# of the writer must reach PROBE_PIDS in this shell, for the cleanup.)
probe_session() {
	local name=$1 sql=$2 pid
	rm -f "$WORK/$name.fifo"
	mkfifo "$WORK/$name.fifo"
	PGAPPNAME=$name psql -q "$HERALD_TEST_POSTGRES_DSN" <"$WORK/$name.fifo" >/dev/null 2>&1 &
	PROBE_PIDS+=($!)
	{
		echo "$sql"
		exec sleep $((PROBE_SECS * 3 + 20))
	} >"$WORK/$name.fifo" &
	PROBE_PIDS+=($!)
	for _ in $(seq 50); do
		pid=$(psql -Atq "$HERALD_TEST_POSTGRES_DSN" -c "select pid from pg_stat_activity where application_name = '$name' and state = 'idle'")
		[[ -n "$pid" ]] && break
		sleep 0.1
	done
	[[ -n "$pid" ]] || die "probe: session $name did not start"
	PROBE_LISTEN+=("$pid")
}

vcs() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# probe_notify LABEL: pgbench notifying commits (on a channel nobody
# listens on) for PROBE_SECS; appends a table row: server CPU per commit,
# and the probe sessions' wake-ups and CPU per commit.
probe_notify() {
	local label=$1 p0 p1 n pid t0=0 t1=0 v0=0 v1=0 nl=${#PROBE_LISTEN[@]}
	p0=$(pg_ticks)
	for pid in "${PROBE_LISTEN[@]}"; do
		t0=$((t0 + $(ticks "$pid"))) v0=$((v0 + $(vcs "$pid")))
	done
	if ! "$PGBENCH" -n -T "$PROBE_SECS" -c 4 -j 2 -f "$WORK/notify.sql" "$HERALD_TEST_POSTGRES_DSN" >"$WORK/notify.out" 2>&1; then
		log "probe: pgbench failed: $(tail -n 3 "$WORK/notify.out")"
		return 1
	fi
	p1=$(pg_ticks)
	for pid in "${PROBE_LISTEN[@]}"; do
		t1=$((t1 + $(ticks "$pid"))) v1=$((v1 + $(vcs "$pid")))
	done
	n=$(awk '/number of transactions actually processed/ {print $NF}' "$WORK/notify.out" | cut -d/ -f1)
	local per_l="–" per_lc="–"
	if ((nl > 0)); then
		per_l=$(calc "($v1-$v0)/$nl/$n" 2)
		per_lc=$(calc "($t1-$t0)*1e6/$CLK_TCK/$nl/$n" 2)
	fi
	echo "| $label | $n | $(calc "($p1-$p0)*1e6/$CLK_TCK/$n") | $per_l | $per_lc |"
}

# probe measures with pgbench on the bench database what one notifying
# commit costs with and without PROBE_LISTENERS idle sessions LISTENing on
# an unrelated channel (on PostgreSQL up to 18 every listening backend of
# the database is signalled and reads the queue), and what a LISTEN +
# UNLISTEN pair costs the server.
PROBE_LISTEN=()
probe() {
	local out="$RUN/probe.md" n tps p0 p1 i
	PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -1 || true)
	if [[ -z "$PG_MASTER" || -z "$PGBENCH" ]]; then
		log "probe skipped: needs pgbench and PostgreSQL on this machine"
		return
	fi
	STORE_PIDS=("$PG_MASTER") # pg_ticks of the probe's server alone
	log "probe: notifying commits with and without idle listeners on another channel; LISTEN/UNLISTEN churn"
	echo "NOTIFY herald_probe_target, 'x';" >"$WORK/notify.sql"
	printf 'LISTEN herald_probe_churn;\nUNLISTEN herald_probe_churn;\n' >"$WORK/churn.sql"
	{
		echo "# LISTEN/NOTIFY probe (PostgreSQL $(psql -Atq "$HERALD_TEST_POSTGRES_DSN" -c 'show server_version'))"
		echo
		echo "pgbench, ${PROBE_SECS}s per row, 4 clients, each transaction one \`NOTIFY herald_probe_target\` (nobody listens on it)."
		echo "Listeners: idle sessions that LISTEN on \`herald_probe_elsewhere\` only. Wake-ups: voluntary context switches."
		echo
		echo "| listeners | notifying commits | server CPU µs/commit | wake-ups per listener and commit | CPU µs per listener and commit |"
		echo "|---|---|---|---|---|"
	} >"$out"
	probe_notify 0 >>"$out" || return 0
	for ((i = 1; i <= PROBE_LISTENERS; i++)); do
		probe_session "hscale_probe_$i" "LISTEN herald_probe_elsewhere;"
	done
	probe_notify "$PROBE_LISTENERS" >>"$out" || return 0
	cleanup_probe

	p0=$(pg_ticks)
	if ! "$PGBENCH" -n -T "$PROBE_SECS" -c 1 -f "$WORK/churn.sql" "$HERALD_TEST_POSTGRES_DSN" >"$WORK/churn.out" 2>&1; then
		log "probe: pgbench failed: $(tail -n 3 "$WORK/churn.out")"
		return 0
	fi
	p1=$(pg_ticks)
	n=$(awk '/number of transactions actually processed/ {print $NF}' "$WORK/churn.out" | cut -d/ -f1)
	tps=$(awk '/^tps/ {printf "%.0f", $3; exit}' "$WORK/churn.out")
	{
		echo
		echo "pgbench, ${PROBE_SECS}s, 1 client, each transaction \`LISTEN\` then \`UNLISTEN\` (two commits):"
		echo
		echo "| pairs | pairs/s | server CPU µs/pair |"
		echo "|---|---|---|"
		echo "| $n | $tps | $(calc "($p1-$p0)*1e6/$CLK_TCK/$n") |"
	} >>"$out"
	cat "$out" >&2
}

PROBE_PIDS=()
BENCH_PID=""
cleanup_probe() {
	local p
	for p in "${PROBE_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	PROBE_PIDS=()
	PROBE_LISTEN=()
}

start_run scaleout
stop_bench() {
	local p
	for p in $BENCH_PID; do
		kill -INT "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BENCH_PID=""
}
trap 'cleanup_probe; stop_bench; stop_all; stop_shards' EXIT
# Each node holds up to PoolSize + QueryPoolSize + 1 connections (2 + 4 + 1
# by default); the largest K runs K+1 nodes, and psql and the probe need a
# few more.
max_k=0
for k in $NODES; do
	[[ "$k" =~ ^[1-9][0-9]*$ ]] || die "NODES: want positive integers, got $k"
	((k > max_k)) && max_k=$k
done
need=$((7 * (max_k + 1) + 12))
if [[ "$ENGINE" == postgres ]]; then
	for dsn in "${SHARD_DSNS[@]:0:$SHARDS}"; do
		have=$(psql -Atq "$dsn" -c "select current_setting('max_connections')::int - (select count(*) from pg_stat_activity)") ||
			die "cannot reach PostgreSQL at a bench DSN"
		((have >= need)) || die "PostgreSQL has $have free connections; NODES up to $max_k needs $need (raise max_connections)"
	done
	PG_MASTER=$(find_postmaster "$HERALD_TEST_POSTGRES_DSN")
fi
find_stores "$SHARDS"
if ((${#STORE_PIDS[@]} == 0)); then
	log "the $ENGINE servers are not all visible in /proc here: the store CPU columns will say n/a"
fi

TABLE="$RUN/scaleout.md"
{
	echo "# Scale-out curve ($ENGINE)"
	echo
	echo "N $ENGINE shards, K nodes with subscribers + 1 idle node (K+1 listening connections per shard), one channel per shard, 128-byte publications through node 1's API."
	echo "CPU figures are per publication, after subtracting each process's idle rate (measured for ${BASELINE}s per K)."
	echo "Step ${STEP_S}s after ${WARMUP_S}s warm-up; subscribers: $SUBS_PER_NODE per node, at most $MAX_SUBS."
	echo
	echo "| shards | nodes | rate/s | achieved/s | subscribers | store CPU µs/pub | store CPU % | listener records/s (all nodes) | client copies/s | p99 all copies | missing | idle node records/pub | idle node µs/pub | node 1 µs/pub | load avg |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$TABLE"

IFS=, read -r -a rate_list <<<"$RATES"
for SHARDS_N in "${SHARD_LIST[@]}"; do
find_stores "$SHARDS_N"
# One channel per shard, each owned by its shard.
shard_channels=()
for ((s = 0; s < SHARDS_N; s++)); do
	shard_channels+=("$("$BENCH" shard-channel --shards "$SHARDS_N" --shard "$s" --prefix scaleout)")
done
for k in $NODES; do
	log "N=$SHARDS_N K=$k: starting $k nodes and one idle node"
	for ((i = 1; i <= k + 1; i++)); do
		start_node "$i"
	done
	idle=$((k + 1))
	idle_pid=${NODE_PIDS[$k]}
	n1_pid=${NODE_PIDS[0]}
	urls=$(for ((i = 1; i <= k; i++)); do node_url "$i"; done | paste -sd, -)
	subs=$((SUBS_PER_NODE * k))
	((subs > MAX_SUBS)) && subs=$MAX_SUBS

	# A checkpoint now (when the role may) rather than during a step: the
	# probe's and the previous K's commits left WAL behind, and the
	# checkpointer's CPU would otherwise land on the first step.
	for dsn in "${SHARD_DSNS[@]:0:$SHARDS_N}"; do
		psql -q "$dsn" -c CHECKPOINT >/dev/null 2>&1 || true
	done
	# Idle rates of PostgreSQL and of the two nodes whose CPU is reported.
	b_pg0=$(pg_ticks) b_id0=$(ticks "$idle_pid") b_n10=$(ticks "$n1_pid") bt0=$(now)
	sleep "$BASELINE"
	b_pg1=$(pg_ticks) b_id1=$(ticks "$idle_pid") b_n11=$(ticks "$n1_pid") bt1=$(now)
	bdt=$(calc "$bt1-$bt0" 3)
	pg_idle=$(calc "($b_pg1-$b_pg0)/$bdt" 3)
	id_idle=$(calc "($b_id1-$b_id0)/$bdt" 3)
	n1_idle=$(calc "($b_n11-$b_n10)/$bdt" 3)

	for rate in "${rate_list[@]}"; do
		tag="n$SHARDS_N-k$k-r$rate"
		log "N=$SHARDS_N K=$k rate=$rate: $subs subscribers"
		# Nothing is published between runs, so the counters are read now;
		# herald-bench runs in the background so that CPU is read once its
		# subscribers are connected: the window holds the warm-up, the step
		# and the grace period, not the connection set-up.
		pubs0=$(metric_sum "$(node_port 1)" '^herald_engine_publish_duration_seconds_count')
		recv0=$(nodes_sum 1 "$idle" '^herald_postgres_listener_lag_seconds_count')
		irecv0=$(metric_sum "$(node_port "$idle")" '^herald_postgres_listener_lag_seconds_count')
		# One herald-bench per shard, each on its shard's channel.
		BENCH_PID=""
		for ((s = 0; s < SHARDS_N; s++)); do
			cmd=(timeout -s INT -k 10 "$RUN_TIMEOUT" "$BENCH" latency
				--url "$urls" --secret "$SECRET" --format "$FORMAT"
				--subscribers $((subs / SHARDS_N)) --channel "${shard_channels[$s]}"
				--api "$(node_api 1)" --api-key "$API_KEY" --api-conns $(((API_CONNS + SHARDS_N - 1) / SHARDS_N))
				--payload 128 --rates "$(calc "$rate/$SHARDS_N" 2)" --step "$STEP" --down=false --warmup "$WARMUP"
				--csv "$RUN/$tag-s$s.csv")
			printf '%q ' "${cmd[@]}" | sed "s|$ROOT/||g" >>"$RUN/commands.txt"
			echo >>"$RUN/commands.txt"
			"${cmd[@]}" >"$RUN/$tag-s$s.md" 2>"$RUN/$tag-s$s.log" &
			BENCH_PID+=" $!"
		done
		for ((s = 0; s < SHARDS_N; s++)); do
			for _ in $(seq $((RUN_TIMEOUT * 20))); do
				grep -q 'subscribers connected' "$RUN/$tag-s$s.log" 2>/dev/null && break
				sleep 0.05
			done
		done
		pg0=$(pg_ticks) id0=$(ticks "$idle_pid") n10=$(ticks "$n1_pid") t0=$(now)
		for p in $BENCH_PID; do
			wait "$p" || log "N=$SHARDS_N K=$k rate=$rate: a herald-bench failed (see $tag-s*.log)"
		done
		BENCH_PID=""
		pg1=$(pg_ticks) id1=$(ticks "$idle_pid") n11=$(ticks "$n1_pid") t1=$(now)
		pubs1=$(metric_sum "$(node_port 1)" '^herald_engine_publish_duration_seconds_count')
		recv1=$(nodes_sum 1 "$idle" '^herald_postgres_listener_lag_seconds_count')
		irecv1=$(metric_sum "$(node_port "$idle")" '^herald_postgres_listener_lag_seconds_count')
		load=$(cut -d' ' -f1 /proc/loadavg)
		pubs=$((pubs1 - pubs0))
		dt=$(calc "$t1-$t0" 3)
		csvs=()
		for ((s = 0; s < SHARDS_N; s++)); do
			[[ -s "$RUN/$tag-s$s.csv" ]] && csvs+=("$RUN/$tag-s$s.csv")
		done
		if ((pubs <= 0)) || ((${#csvs[@]} < SHARDS_N)); then
			echo "| $SHARDS_N | $k | $rate | failed | $subs | | | | | | | | | | $load |" >>"$TABLE"
			continue
		fi
		# Sums over the shards' loads; the p99 is the worst of them.
		achieved=0 copies=0 p99us=0 missing=0
		for c in "${csvs[@]}"; do
			achieved=$(calc "$achieved+$(csv_col "$c" achieved_rate)" 3)
			copies=$(calc "$copies+$(csv_col "$c" deliveries_per_s)" 3)
			missing=$((missing + $(csv_col "$c" missing)))
			p99us=$(calc "($(csv_col "$c" all_p99_us) > $p99us) ? $(csv_col "$c" all_p99_us) : $p99us" 0)
		done
		per_pub() { calc "(($2-$1) - $3*$dt)*1e6/$CLK_TCK/$pubs" 1; }
		if ((${#STORE_PIDS[@]} > 0)); then
			pg_us=$(per_pub "$pg0" "$pg1" "$pg_idle")
			pg_pct=$(calc "$pg_us*$achieved/1e4" 0)
		else
			pg_us=n/a pg_pct=n/a
		fi
		recv_s=$(calc "($recv1-$recv0)/$pubs*$achieved" 0)
		p99=$(calc "$p99us/1000" 1)
		echo "| $SHARDS_N | $k | $rate | $(calc "$achieved" 0) | $subs | $pg_us | $pg_pct | $recv_s | $(calc "$copies" 0) | $p99 ms | $missing | $(calc "($irecv1-$irecv0)/$pubs" 2) | $(per_pub "$id0" "$id1" "$id_idle") | $(per_pub "$n10" "$n11" "$n1_idle") | $load |" >>"$TABLE"
	done

	# stop_all keeps each node's final metrics in the run folder and drops
	# the schema; file them under this K.
	stop_all
	mkdir -p "$RUN/n$SHARDS_N-k$k"
	mv "$RUN"/node*.log "$RUN"/node*.metrics.txt "$RUN/n$SHARDS_N-k$k/" 2>/dev/null || true
done
done

{
	echo
	echo "Store idle CPU is measured per K over ${BASELINE}s; store CPU % is the share of one core at the achieved rate."
	echo "Machine: see machine.txt; exact commands: commands.txt."
} >>"$TABLE"
cat "$TABLE"
# The probe runs last: the hundreds of thousands of notifying commits it
# leaves behind in PostgreSQL's queue and WAL doubled the next step's
# PostgreSQL CPU when it ran first.
if ((PROBE)) && [[ "$ENGINE" == postgres ]]; then
	probe
fi
log "done: ${RUN#"$ROOT"/}"
