#!/usr/bin/env bash
# centrifugo-cli.sh runs Centrifugo's command lines, as scripts and compose
# files write them, against the Herald binary under the name centrifugo:
# genconfig, gentoken/checktoken, gensubtoken/checksubtoken, checkconfig,
# defaultconfig, and a compose-style `centrifugo -c config.json
# --client.insecure --http_server.port PORT` that must answer /health.
#
#   tests/centrifugo-cli.sh [HERALD_BINARY]
#
# Without an argument it builds ./cmd/herald. PORT (default 0: the kernel
# picks one, read back from the node's log) is the node's port. Needs curl.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d)
NODE=
cleanup() {
	if [[ -n "$NODE" ]]; then kill "$NODE" 2>/dev/null || true; wait "$NODE" 2>/dev/null || true; fi
	rm -rf "$WORK"
}
trap cleanup EXIT

if [[ $# -ge 1 ]]; then
	cp "$1" "$WORK/herald"
else
	(cd "$ROOT" && go build -o "$WORK/herald" ./cmd/herald)
fi
ln -s herald "$WORK/centrifugo"
PATH="$WORK:$PATH"
cd "$WORK"

fail() { echo "FAIL: $*" >&2; exit 1; }

centrifugo genconfig
[[ -s config.json ]] || fail "genconfig wrote no config.json"
centrifugo checkconfig || fail "checkconfig of genconfig's file"

out=$(centrifugo gentoken -u 42 -t 3600)
[[ "$out" == 'HMAC SHA-256 JWT for user "42" with expiration TTL 1h0m0s:'$'\n'eyJ* ]] || fail "gentoken printed: $out"
token=$(centrifugo gentoken -u 42 -t 3600 -q)
out=$(centrifugo checktoken "$token")
[[ "$out" == "valid token for user 42"$'\n'"payload: {"* ]] || fail "checktoken printed: $out"
if centrifugo checktoken "${token}x" >/dev/null; then fail "checktoken accepted a bad signature"; fi

subtoken=$(centrifugo gensubtoken -u 42 -s chat -q)
out=$(centrifugo checksubtoken "$subtoken")
[[ "$out" == 'valid subscription token for user "42" and channel "chat"'$'\n'"payload: {"* ]] || fail "checksubtoken printed: $out"

echo '{"http_server": {"port": "abc"}}' >bad.json
if out=$(centrifugo checkconfig -c bad.json); then fail "checkconfig accepted bad.json"; fi
[[ "$out" == *http_server.port* ]] || fail "checkconfig did not name the key: $out"

for f in default.json default.yaml default.toml; do
	centrifugo defaultconfig -c "$f"
	centrifugo checkconfig -c "$f" || fail "defaultconfig's $f does not pass checkconfig"
done

# The compose-style line; the node's log says where it listens.
centrifugo -c config.json --client.insecure --http_server.port "${PORT:-0}" -a 127.0.0.1 --health.enabled 2>log >/dev/null &
NODE=$!
addr=$(sed -nE 's/.*msg="herald listening" address=([^ ]+).*/\1/p; T; q' < <(timeout 30 tail --pid="$NODE" -n +1 -f log)) || true
[[ -n "$addr" ]] || { cat log >&2; fail "the node did not start"; }
status=$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/health")
[[ "$status" == 200 ]] || fail "/health answered $status"

echo "ok: Centrifugo's command line on $(centrifugo version)"
