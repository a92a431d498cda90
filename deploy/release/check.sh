#!/usr/bin/env bash
# check.sh makes a snapshot release with goreleaser (the version
# deploy/release/go.mod pins) and checks it: an archive for each of
# linux, darwin and windows on amd64 and arm64, checksums.txt matching
# them, the linux binary naming the commit in `herald version`, and the
# build reproducible: a plain go build with the release's flags gives the
# same bytes as goreleaser's.
#
#   deploy/release/check.sh BIN_DIR     (goreleaser is built into BIN_DIR)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${1:?usage: check.sh BIN_DIR}
mkdir -p "$BIN"
BIN=$(cd "$BIN" && pwd)
cd "$ROOT"

echo "building goreleaser"
go build -C deploy/release -o "$BIN/goreleaser" github.com/goreleaser/goreleaser/v2
"$BIN/goreleaser" --version | head -n 3

# goreleaser reads the remote's URL with the commit, and without one (a
# checkout made with git worktree, or git init) it gives up on the commit
# too in snapshot mode: name the project's for this run only.
if [[ -z "$(git remote)" ]]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/heraldhq/herald.git
fi
"$BIN/goreleaser" release --config deploy/release/goreleaser.yaml --snapshot --clean --parallelism 2
DIST=$ROOT/.tmp/dist

fail=0
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		ext=tar.gz
		[[ $os == windows ]] && ext=zip
		n=$(find "$DIST" -maxdepth 1 -name "herald_*_${os}_${arch}.${ext}" | wc -l)
		if ((n != 1)); then
			echo "FAIL: no herald_*_${os}_${arch}.${ext} in $DIST"
			fail=1
		fi
	done
done
archives=$(find "$DIST" -maxdepth 1 \( -name 'herald_*.tar.gz' -o -name 'herald_*.zip' \) | wc -l)
listed=$(wc -l <"$DIST/checksums.txt")
if ((archives != 6 || listed != archives)); then
	echo "FAIL: $archives archives, $listed lines in checksums.txt; want 6 and 6"
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
