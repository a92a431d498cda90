#!/usr/bin/env bash
# check.sh checks the release: goreleaser (the version deploy/release/go.mod
# pins) validates goreleaser.yaml and makes a snapshot release of two of its
# six targets, one of each archive format and one of each architecture:
# linux/amd64 (tar.gz, as darwin's) and windows/arm64 (zip). It checks their
# archives, checksums.txt matching them, the linux binary naming the commit
# in `herald version`, and that the build is reproducible: a plain go build
# with the release's flags gives the same bytes as goreleaser's.
#
# The other four targets are checked without building them again: deploy's
# TestReleaseTargets holds goreleaser.yaml to the six targets and their
# archive formats, and the test command's vet steps already build every
# package for darwin and windows.
#
#   deploy/release/check.sh BIN_DIR           (goreleaser is built into
#                                              BIN_DIR, unless the pinned
#                                              one is there already)
#   deploy/release/check.sh --build BIN_DIR   (only that)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_ONLY=""
if [[ ${1:-} == --build ]]; then
	BUILD_ONLY=1
	shift
fi
BIN=${1:?usage: check.sh [--build] BIN_DIR}
mkdir -p "$BIN"
BIN=$(cd "$BIN" && pwd)
cd "$ROOT"

# Building goreleaser takes minutes on two cores: a stamp beside the binary
# names the pin and the Go it was built with, and a binary whose stamp
# matches is kept.
stamp="$(go version) $(grep -E '^[[:space:]]*github.com/goreleaser/goreleaser/v2 ' deploy/release/go.mod | xargs)"
if [[ -x "$BIN/goreleaser" && "$(cat "$BIN/goreleaser.stamp" 2>/dev/null)" == "$stamp" ]]; then
	echo "goreleaser already built: $stamp"
else
	echo "building goreleaser: $stamp"
	rm -f "$BIN/goreleaser.stamp"
	go build -C deploy/release -o "$BIN/goreleaser" github.com/goreleaser/goreleaser/v2
	echo "$stamp" >"$BIN/goreleaser.stamp"
fi
[[ -z "$BUILD_ONLY" ]] || exit 0
"$BIN/goreleaser" --version | head -n 3

# goreleaser reads the remote's URL with the commit, and without one (a
# checkout made with git worktree, or git init) it gives up on the commit
# too in snapshot mode: name the project's for this run only.
if [[ -z "$(git remote)" ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/heraldhq/herald.git
fi
"$BIN/goreleaser" check --config deploy/release/goreleaser.yaml

# The snapshot's configuration: goreleaser.yaml with its builds limited to
# the two targets (the paths in it are the working directory's, the root).
DIST=$ROOT/.tmp/dist
mkdir -p "$ROOT/.tmp"
config=$ROOT/.tmp/release-check.yaml
awk '
	/^    goos: / { print "    goos: [linux, windows]"; next }
	/^    goarch: / {
		print
		print "    ignore:"
		print "      - { goos: linux, goarch: arm64 }"
		print "      - { goos: windows, goarch: amd64 }"
		next
	}
	{ print }
' deploy/release/goreleaser.yaml >"$config"
if ! grep -q 'goos: windows, goarch: amd64' "$config"; then
	echo "FAIL: could not limit goreleaser.yaml's builds to two targets (no 'goarch:' line under builds)"
	exit 1
fi
"$BIN/goreleaser" release --config "$config" --snapshot --clean --parallelism 2

fail=0
targets=(linux_amd64.tar.gz windows_arm64.zip)
for target in "${targets[@]}"; do
	n=$(find "$DIST" -maxdepth 1 -name "herald_*_${target}" | wc -l)
	if ((n != 1)); then
		echo "FAIL: no herald_*_${target} in $DIST"
		fail=1
	fi
done
archives=$(find "$DIST" -maxdepth 1 \( -name 'herald_*.tar.gz' -o -name 'herald_*.zip' \) | wc -l)
listed=$(wc -l <"$DIST/checksums.txt")
if ((archives != ${#targets[@]} || listed != archives)); then
	echo "FAIL: $archives archives, $listed lines in checksums.txt; want ${#targets[@]} and ${#targets[@]}"
	fail=1
fi
(cd "$DIST" && sha256sum --check --strict checksums.txt) || fail=1

commit=$(git rev-parse HEAD)
linux=$(find "$DIST" -path "*herald_linux_amd64*" -type f -name herald | head -n 1)
if [[ -z "$linux" ]]; then
	echo "FAIL: no linux/amd64 binary under $DIST"
	exit 1
fi
if [[ $(go env GOOS)/$(go env GOARCH) == linux/amd64 ]]; then
	version=$("$linux" version)
	echo "$version"
	[[ $version == *"commit ${commit:0:12}"* ]] || { echo "FAIL: herald version does not name commit ${commit:0:12}"; fail=1; }
fi

# The release's flags (goreleaser.yaml), by hand, in another directory:
# the same bytes, or the build is not reproducible.
again=$(mktemp -d)
trap 'rm -rf "$again"' EXIT
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 GOAMD64=v1 go build -trimpath -buildvcs=false \
	-ldflags "-s -w -buildid= -X main.buildCommit=$commit" -o "$again/herald" ./cmd/herald
want=$(sha256sum <"$linux" | cut -d' ' -f1)
got=$(sha256sum <"$again/herald" | cut -d' ' -f1)
if [[ $want != "$got" ]]; then
	echo "FAIL: not reproducible: goreleaser's linux/amd64 herald is $want, the same build again is $got"
	fail=1
else
	echo "reproducible: linux/amd64 herald $want both times"
fi
((fail == 0)) && echo "release check passed"
exit "$fail"
