#!/usr/bin/env bash
# A private Docker engine for `roller collect --runner docker` on a machine without one (and for the tests):
# Debian's docker.io, started with no bridge and no iptables rules, everything it keeps under one directory.
#
#   scripts/docker-engine.sh install          install docker.io (and debootstrap) when missing: root + apt
#   scripts/docker-engine.sh start DIR        start dockerd under DIR; prints DOCKER_HOST=unix://DIR/docker.sock
#   scripts/docker-engine.sh base-image DIR   build roller-base:<digest> on that engine, once; prints its name
#   scripts/docker-engine.sh leftovers DIR    what roller left on that engine: containers, networks, volumes
#   scripts/docker-engine.sh stop DIR         stop it; fails if a mount under DIR is left behind
#
# No registry is reachable here: the base image is a Debian minbase (debootstrap, from apt's own mirror) with the
# host's node, imported, never pulled. Its rootfs is cached by digest under ${ROLLER_CACHE_DIR:-~/.cache/roller}/docker.
set -euo pipefail

die() { echo "docker-engine: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}

need_dir() { [ -n "$dir" ] || die "$cmd needs a directory (the engine's home), e.g. /tmp/roller-docker"; }
sock() { echo "unix://$dir/docker.sock"; }
dk() { DOCKER_HOST=$(sock) docker "$@"; }
# The Debian mirror apt itself uses on this machine (deb822 URIs, else a sources.list deb line), never a host named here.
apt_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }')
  [ -n "$uri" ] || uri=$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '$2 !~ /security/ { print ($2 ~ /^\[/ ? $3 : $2); exit }')
  [ -n "$uri" ] && echo "$uri"
}

install() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || die "${missing[*]} missing and not root: install them (apt-get install ${missing[*]}), or run as root"
  command -v apt-get >/dev/null || die "${missing[*]} missing and there is no apt-get: install Docker Engine ≥ 20.10 and debootstrap"
  echo "docker-engine: installing ${missing[*]} (apt)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

start() {
  need_dir
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # A socket path is at most 107 bytes: containerd's live under exec-root, so it stays short.
  local exec_root="/tmp/rdk-$(echo -n "$dir" | sha256sum | cut -c1-12)"
  if [ -S "$dir/docker.sock" ] && dk version >/dev/null 2>&1; then sock; return 0; fi
  mkdir -p "$exec_root"
  echo "$exec_root" > "$dir/exec-root"
  # setsid: the daemon outlives this script, not the caller's stop.
  setsid dockerd --bridge=none --iptables=false --ip6tables=false \
    --data-root "$dir/data" --exec-root "$exec_root" --pidfile "$dir/dockerd.pid" \
    -H "$(sock)" > "$dir/dockerd.log" 2>&1 < /dev/null &
  for _ in $(seq 1 100); do
    if dk version >/dev/null 2>&1; then sock; return 0; fi
    sleep 0.1
  done
  tail -20 "$dir/dockerd.log" >&2 || true
  die "dockerd did not answer on $dir/docker.sock in 10 s (its log is above)"
}

base_image() {
  need_dir
  local node_bin node_version recipe digest name cache rootfs_tar
  node_bin=$(command -v node)
  node_version=$(node --version)
  # The digest covers this recipe and the node it copies: a change of either is a new image.
  recipe=$(sed -n '/^base_image()/,/^}/p' "$0")
  digest=$(printf '%s\n%s\n%s\n' "$recipe" "$node_version" "$(sha256sum "$node_bin" | cut -c1-64)" | sha256sum | cut -c1-16)
  name="roller-base:$digest"
  # roller-base (latest) is the name Harbor task Dockerfiles start FROM (examples/harbor).
  if dk image inspect "$name" >/dev/null 2>&1; then dk tag "$name" roller-base:latest; echo "$name"; return 0; fi
  cache="${ROLLER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/roller}/docker"
  rootfs_tar="$cache/base-$digest.tar"
  if [ ! -s "$rootfs_tar" ]; then
    command -v debootstrap >/dev/null || die "debootstrap is missing: scripts/docker-engine.sh install"
    mkdir -p "$cache"
    local rootfs
    rootfs=$(mktemp -d "$cache/rootfs-XXXXXX")
    echo "docker-engine: building the base rootfs (debootstrap bookworm minbase, about a minute, once)" >&2
    local mirror
    mirror=$(apt_mirror) || { rm -rf "$rootfs"; die "no Debian mirror in apt's sources (/etc/apt/sources.list.d/*.sources URIs, or sources.list deb lines): debootstrap needs the one apt uses"; }
    debootstrap --variant=minbase --include=ca-certificates,git,procps,curl,python3,tmux bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 \
      || { tail -20 "$cache/debootstrap.log" >&2; rm -rf "$rootfs"; die "debootstrap failed (log: $cache/debootstrap.log)"; }
    cp "$node_bin" "$rootfs/usr/bin/node"
    # curl, python3 and tmux: what a developer machine has and harnesses look for (OpenClaw offers skills by them).
    # The non-root user samples run as; /root traversable, because a sample's paths may lie under it.
    chroot "$rootfs" /usr/sbin/useradd --uid 1000 --create-home --shell /bin/bash agent
    chmod 0711 "$rootfs/root"
    rm -rf "$rootfs/var/cache/apt/archives"/*.deb "$rootfs/var/lib/apt/lists"/*
    tar -C "$rootfs" --numeric-owner -cf "$rootfs_tar.part" .
    mv "$rootfs_tar.part" "$rootfs_tar"
    rm -rf "$rootfs"
  fi
  dk import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'USER agent' --change 'WORKDIR /home/agent' \
    "$rootfs_tar" "$name" >/dev/null
  dk tag "$name" roller-base:latest
  echo "$name"
}

leftovers() {
  need_dir
  dk ps -aq --filter label=dev.roller.sample
  dk network ls -q --filter label=dev.roller.sample
  dk volume ls -q --filter label=dev.roller.sample
}

stop() {
  need_dir
  dir=$(cd "$dir" && pwd)
  local pid exec_root
  if [ -s "$dir/dockerd.pid" ]; then
    pid=$(cat "$dir/dockerd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; die "dockerd (pid $pid) did not stop in 15 s: killed"; }
  fi
  exec_root=$(cat "$dir/exec-root" 2>/dev/null || true)
  # dockerd leaves its default network namespace bound under exec-root: ours to undo.
  if [ -n "$exec_root" ]; then
    awk -v e="$exec_root" '$2 ~ "^"e {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  fi
  local left
  left=$(awk -v d="$dir" -v e="${exec_root:-/nonexistent}" '$2 ~ "^"d || $2 ~ "^"e {print $2}' /proc/mounts)
  [ -z "$left" ] || die "mounts left behind after dockerd stopped: $left"
  [ -n "$exec_root" ] && rm -rf "$exec_root"
  return 0
}

case "$cmd" in
  install) install ;;
  start) start ;;
  base-image) base_image ;;
  leftovers) leftovers ;;
  stop) stop ;;
  *) die "usage: $0 install | start DIR | base-image DIR | leftovers DIR | stop DIR" ;;
esac
