#!/usr/bin/env bash
# Runs the wsmem harness for each library given (default: all) and prints one
# JSON report per library. Server and client are separate processes because
# one process may hold at most 20,000 open files here.
# Usage: bench/wsmem/run.sh [-n 19000] [lib ...]
set -euo pipefail
n=19000
if [[ "${1:-}" == "-n" ]]; then n=$2; shift 2; fi
libs=("$@")
[[ ${#libs[@]} -gt 0 ]] || libs=(gorilla coder gws gobwas-epoll herald hub)

# The bench module (bench/go.mod) holds the harness.
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go build -o "$bin/server" ./wsmem/server && go build -o "$bin/client" ./wsmem/client)

for lib in "${libs[@]}"; do
	out="$bin/$lib.out"
	"$bin/server" -lib "$lib" -max-life 5m >"$out" 2>&1 &
	pid=$!
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's/^listening //p' "$out")
		[[ -n "$addr" ]] && break
		sleep 0.1
	done
	if [[ -z "$addr" ]]; then
		echo "server for $lib did not start:" >&2
		cat "$out" >&2
		kill "$pid" 2>/dev/null || true
		exit 1
	fi
	mode=echo
	[[ "$lib" == hub ]] && mode=hub
	timeout 300 "$bin/client" -addr "$addr" -n "$n" -mode "$mode" || echo "client for $lib failed" >&2
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done
