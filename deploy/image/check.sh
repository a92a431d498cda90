#!/usr/bin/env bash
# check.sh builds the container image with build.sh into a storage of its
# own (vfs, no overlay mounts or user namespaces needed), mounts it, and
# runs deploy's TestImage against the mounted root filesystem and the
# image's config: what files it holds, its user, labels and health check,
# and the entrypoint serving a WebSocket client (run straight from the
# mount point: containers cannot be run in every sandbox, and the binary
# is static). Needs root (buildah mount) and buildah.
#
#   deploy/image/check.sh STATE_DIR
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE=${1:?usage: check.sh STATE_DIR}
mkdir -p "$STATE"
STATE=$(cd "$STATE" && pwd)
export BUILDAH_ARGS="--storage-driver vfs --root $STATE/root --runroot $STATE/run"
# shellcheck disable=SC2206 # word splitting intended
BUILDAH=(buildah $BUILDAH_ARGS)
IMAGE=localhost/herald:check

# A container left by an interrupted run would hold the image.
"${BUILDAH[@]}" rm --all >/dev/null 2>&1 || true
"$ROOT/deploy/image/build.sh" "$IMAGE"

container=$("${BUILDAH[@]}" from --pull=false --isolation chroot "$IMAGE")
cleanup() {
	"${BUILDAH[@]}" umount "$container" >/dev/null 2>&1 || true
	"${BUILDAH[@]}" rm "$container" >/dev/null 2>&1 || true
	"${BUILDAH[@]}" rmi "$IMAGE" >/dev/null 2>&1 || true
}
trap cleanup EXIT
rootfs=$("${BUILDAH[@]}" mount "$container")
"${BUILDAH[@]}" inspect --type image "$IMAGE" >"$STATE/inspect.json"
echo "image $IMAGE mounted at $rootfs"
cd "$ROOT"
HERALD_TEST_IMAGE_ROOTFS=$rootfs HERALD_TEST_IMAGE_INSPECT=$STATE/inspect.json \
	go test -race -count=1 -run '^TestImage$' -v ./deploy
