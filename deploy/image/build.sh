#!/usr/bin/env bash
# build.sh builds Herald's container image with buildah, from scratch:
# the binary is compiled here with Go (static, -trimpath, the commit through
# -ldflags), staged with the CA bundle, and deploy/image/Containerfile
# copies both into an empty image. Nothing is downloaded: no base image, no
# build-stage image.
#
#   deploy/image/build.sh [IMAGE]        (default IMAGE: localhost/herald:VERSION)
#
# Variables:
#   GOARCH            the image's architecture (default: this machine's Go GOARCH)
#   HERALD_CA_BUNDLE  the CA certificates to ship (default: the system's bundle,
#                     /etc/ssl/certs/ca-certificates.crt on Debian)
#   BUILDAH_ARGS      global buildah options, e.g. "--storage-driver vfs --root DIR"
#   SOURCE_DATE_EPOCH fixes the image's creation time (default: the commit's time)
#
# The image is committed in Docker's format, the one that keeps HEALTHCHECK
# (the OCI image config has no field for it); OCI labels are set either way.
# It prints the image's name last.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

GOARCH=${GOARCH:-$(go env GOARCH)}
CA_BUNDLE=${HERALD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
# shellcheck disable=SC2206 # word splitting intended: a list of options
BUILDAH=(buildah ${BUILDAH_ARGS:-})

VERSION=$(sed -nE 's/^const Version = "([^"]+)"$/\1/p' server/server.go)
[[ -n "$VERSION" ]] || { echo "build.sh: no 'const Version' in server/server.go" >&2; exit 1; }
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
fi
CREATED=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
IMAGE=${1:-localhost/herald:$VERSION}

[[ -r "$CA_BUNDLE" ]] || { echo "build.sh: no CA bundle at $CA_BUNDLE (install ca-certificates or set HERALD_CA_BUNDLE)" >&2; exit 1; }

CONTEXT=$(mktemp -d)
trap 'rm -rf "$CONTEXT"' EXIT
mkdir -p "$CONTEXT/data" "$CONTEXT/var/lib" "$CONTEXT/usr/local/bin" "$CONTEXT/centrifugo"
# The binary's second name: under it the command line is Centrifugo's.
ln -s /herald "$CONTEXT/usr/local/bin/centrifugo"
echo "building herald $VERSION ($REVISION) for linux/$GOARCH"
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH go build -trimpath -buildvcs=false \
	-ldflags "-s -w -X main.buildCommit=$REVISION" -o "$CONTEXT/herald" ./cmd/herald
cp "$CA_BUNDLE" "$CONTEXT/ca-certificates.crt"

"${BUILDAH[@]}" build --format docker --pull=false --arch "$GOARCH" --os linux \
	--timestamp "$SOURCE_DATE_EPOCH" \
	--build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" --build-arg "CREATED=$CREATED" \
	-f "$ROOT/deploy/image/Containerfile" -t "$IMAGE" "$CONTEXT" >&2
echo "$IMAGE"
