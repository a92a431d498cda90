#!/usr/bin/env bash
# The standard matrix: the three scenarios one after the other.
#   bench/matrix.sh [--quick]
set -euo pipefail
dir=$(dirname "$0")
"$dir/postgresignalr.sh" "$@"
"$dir/idle.sh" "$@"
"$dir/fanout.sh" "$@"
