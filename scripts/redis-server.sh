#!/usr/bin/env bash
# A private Redis for `roller collect --queue` / `roller worker` on a machine without one (and for the tests): Debian's
# redis-server on loopback, nothing persisted, everything it keeps under one directory.
#
#   scripts/redis-server.sh install              install redis-server when missing: root + apt
#   scripts/redis-server.sh start DIR [PASSWORD] start it under DIR on a free port, with PASSWORD (absent: a random one
#                                                made here); prints redis://:PASSWORD@127.0.0.1:PORT
#   scripts/redis-server.sh stop DIR             stop it
set -euo pipefail

die() { echo "redis-server: $*" >&2; exit 1; }
cmd=${1:-}
dir=${2:-}
need_dir() { [ -n "$dir" ] || die "$cmd needs a directory, e.g. /tmp/roller-redis"; }

case "$cmd" in
  install)
    command -v redis-server >/dev/null && exit 0
    [ "$(id -u)" = 0 ] || die "redis-server missing and not root: apt-get install redis-server, or run as root"
    command -v apt-get >/dev/null || die "redis-server missing and there is no apt-get: install Redis ≥ 6.2"
    echo "redis-server: installing redis-server (apt)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    ;;
  start)
    need_dir
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    port=16379
    while (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$((port + 1)); done
    # A Redis anyone on the machine can write to is a queue anyone can fill: never without a password.
    pass=${3:-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}
    # The password goes in a config file (0600), never on a command line another user could read.
    umask 077
    { echo "port $port"; echo "bind 127.0.0.1"; echo 'save ""'; echo "appendonly no"; echo "dir $dir"; echo "pidfile $dir/redis.pid";
      echo "logfile $dir/redis.log"; echo "daemonize yes"; echo "requirepass $pass"; } >"$dir/redis.conf"
    redis-server "$dir/redis.conf"
    for _ in $(seq 1 50); do
      [ -s "$dir/redis.pid" ] && (echo >/dev/tcp/127.0.0.1/$port) 2>/dev/null && { echo "redis://:$pass@127.0.0.1:$port"; exit 0; }
      sleep 0.1
    done
    die "redis-server did not start in 5 s; see $dir/redis.log"
    ;;
  stop)
    need_dir
    [ -f "$dir/redis.pid" ] || exit 0
    pid=$(cat "$dir/redis.pid")
    kill "$pid" 2>/dev/null || exit 0
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    ;;
  *) die "usage: $0 install | start DIR [PASSWORD] | stop DIR" ;;
esac
