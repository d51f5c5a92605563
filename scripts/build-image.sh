#!/usr/bin/env bash
# Builds the hpo-mpi container image (k8s-mpi/Dockerfile) from this repository.
#
#   scripts/build-image.sh [--cuda [--efa]] [--tag NAME] [--base IMAGE]
#
# Default: the CPU image, tagged hpo-mpi:cpu. --cuda: the CUDA image (PyPI's CUDA torch, pinned in
# scripts/install-deps.sh), tagged hpo-mpi:cuda. --efa: with AWS's EFA software, for EFA
# instance types (p4d, p5; needs the EFA installer's download site, see the Dockerfile), tagged
# hpo-mpi:cuda too. --tag: another name (e.g. an ECR repository's). hpo-mpi:cpu and hpo-mpi:cuda
# are the names the manifests in k8s-mpi/ use.
#
# Builder: docker (BuildKit) when its daemon answers, else buildah (`--isolation chroot`, which
# needs no OCI runtime; Debian 12: apt-get install buildah podman). Base image: --base, else
# debian:12 when the builder has it or can pull it, else localhost/debian:12, imported from a
# Debian 12 root file system that mmdebstrap makes from the Debian archive (apt-get install
# mmdebstrap; about 2 minutes), kept as HPO_IMAGE_CACHE/debian-12-rootfs.tar (default
# ~/.cache/hpo-mpi) for later builds. So the image builds where only Debian's archive and PyPI can
# be reached. HPO_DEBIAN_MIRROR and HPO_DEBIAN_SECURITY_MIRROR name other Debian mirrors for
# mmdebstrap.
#
# The host's CA certificates go to the build as the secret `ca-bundle`, for pip behind a
# TLS-inspecting proxy (only the CUDA build uses them; they end up in no layer).
# Storage: buildah's and podman's usual (/var/lib/containers), or CONTAINERS_STORAGE_CONF's.
set -euo pipefail
cd "$(dirname "$0")/.."

target=cpu efa=0 tag="" base=""
while (($#)); do
  case "$1" in
    --cuda) target=cuda ;;
    --efa) efa=1 ;;
    --tag) tag=$2; shift ;;
    --base) base=$2; shift ;;
    *)
      echo "usage: scripts/build-image.sh [--cuda [--efa]] [--tag NAME] [--base IMAGE]" >&2
      exit 2
      ;;
  esac
  shift
done
if ((efa)) && [ "$target" != cuda ]; then
  echo "build-image.sh: --efa goes with --cuda" >&2
  exit 2
fi
[ -n "$tag" ] || tag=hpo-mpi:$target

if command -v docker > /dev/null && timeout 30 docker info > /dev/null 2>&1; then
  builder=docker
elif command -v buildah > /dev/null; then
  builder=buildah
else
  echo "build-image.sh: neither a docker daemon nor buildah here (Debian 12: apt-get install" \
    "buildah podman mmdebstrap)" >&2
  exit 2
fi

# Whether the builder has image $1 or can pull it.
have_image() {
  if [ "$builder" = docker ]; then
    docker image inspect "$1" > /dev/null 2>&1 || timeout 300 docker pull -q "$1" > /dev/null 2>&1
  else
    buildah inspect --type image "$1" > /dev/null 2>&1 ||
      timeout 300 buildah pull -q "$1" > /dev/null 2>&1
  fi
}

# localhost/debian:12 from a Debian 12 (minbase) root file system made with mmdebstrap.
import_debian() {
  local cache=${HPO_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hpo-mpi}
  local rootfs=$cache/debian-12-rootfs.tar
  local mirror=${HPO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  local security=${HPO_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
  if [ ! -s "$rootfs" ]; then
    command -v mmdebstrap > /dev/null || {
      echo "build-image.sh: no debian:12 image to build from, and no mmdebstrap to make one" \
        "(apt-get install mmdebstrap)" >&2
      exit 2
    }
    mkdir -p "$cache"
    echo "making a Debian 12 root file system with mmdebstrap ($rootfs)"
    # --format: mmdebstrap guesses the format from the name, and *.part would be a folder.
    mmdebstrap --variant=minbase --format=tar --quiet bookworm "$rootfs.part" \
      "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
      "deb $security bookworm-security main"
    mv "$rootfs.part" "$rootfs"
  fi
  echo "importing $rootfs as localhost/debian:12"
  if [ "$builder" = docker ]; then
    docker import "$rootfs" localhost/debian:12 > /dev/null
  else
    local container
    container=$(buildah from scratch)
    buildah add --quiet "$container" "$rootfs" / > /dev/null
    buildah config --cmd bash "$container"
    buildah commit --quiet --rm "$container" localhost/debian:12 > /dev/null
  fi
}

if [ -z "$base" ]; then
  if have_image debian:12; then
    base=debian:12
  else
    have_image localhost/debian:12 || import_debian
    base=localhost/debian:12
  fi
fi

args=(-f k8s-mpi/Dockerfile --target "$target" --build-arg "BASE_IMAGE=$base"
      --build-arg "EFA=$efa" -t "$tag")
ca=${HPO_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$ca" ] && args+=(--secret "id=ca-bundle,src=$ca")
echo "building $tag ($target) from $base with $builder"
start=$SECONDS
if [ "$builder" = docker ]; then
  DOCKER_BUILDKIT=1 docker build "${args[@]}" .
else
  # The Dockerfile's own ignore file (BuildKit finds it by name; buildah 1.28 is told).
  buildah bud --isolation chroot --layers --ignorefile k8s-mpi/Dockerfile.dockerignore \
    "${args[@]}" .
fi
echo "built $tag in $((SECONDS - start)) s"
