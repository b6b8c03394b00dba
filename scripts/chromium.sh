#!/usr/bin/env bash
# Debian's Chromium for the `roller view` tests (driven by playwright-core; no tool ever downloads its own browser).
#
#   scripts/chromium.sh install   install chromium when missing: root + apt; prints its path
set -euo pipefail

die() { echo "chromium: $*" >&2; exit 1; }
case "${1:-}" in
  install)
    if ! command -v chromium >/dev/null; then
      [ "$(id -u)" = 0 ] || die "chromium missing and not root: apt-get install chromium, or run as root"
      command -v apt-get >/dev/null || die "chromium missing and there is no apt-get: install Chromium ≥ 120 and put it on PATH"
      echo "chromium: installing chromium (apt)" >&2
      apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    fi
    command -v chromium
    ;;
  *) die "usage: scripts/chromium.sh install" ;;
esac
