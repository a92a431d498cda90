#!/usr/bin/env bash
# Starts the quickstart with one command: builds herald, installs the
# backend's npm packages if they are missing, starts Herald (herald.yaml)
# and the backend (server.mjs), and prints the page's address. Ctrl-C
# stops both.
#
# Needs Go and Node 20 (with npm). Herald listens on 127.0.0.1:8000, the
# backend on 127.0.0.1:3000 (QUICKSTART_PORT; a different port must also be
# added to websocket.allowed_origins in herald.yaml).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN="$ROOT/.tmp/bin/herald"

echo "building herald into .tmp/bin (the first build takes a minute or so)"
mkdir -p "$(dirname "$BIN")"
(cd "$ROOT" && go build -o "$BIN" ./cmd/herald)

if [[ ! -d "$HERE/node_modules/centrifuge" || ! -d "$HERE/node_modules/jose" ]]; then
	echo "installing the backend's npm packages (npm ci)"
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
fi

HERALD_PID=""
BACKEND_PID=""
stop() {
	trap - EXIT INT TERM
	# Stop both, then wait for both: each shuts down on SIGTERM.
	[[ -z "$BACKEND_PID" ]] || kill -TERM "$BACKEND_PID" 2>/dev/null || true
	[[ -z "$HERALD_PID" ]] || kill -TERM "$HERALD_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	echo "stopped"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$BIN" serve --config "$HERE/herald.yaml" &
HERALD_PID=$!
node "$HERE/server.mjs" &
BACKEND_PID=$!

echo
echo "Open http://127.0.0.1:${QUICKSTART_PORT:-3000}/ in two browser windows and sign in with two names."
echo "Press Ctrl-C to stop."
echo

# When either one exits (a port already taken, say), stop the other too.
set +e
wait -n "$HERALD_PID" "$BACKEND_PID"
rc=$?
echo "herald or the backend exited ($rc); stopping"
exit "$rc"
