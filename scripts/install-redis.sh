#!/usr/bin/env bash
# Installs the Redis server the shared-pool tests start (test/support/redisServer.ts) when it is
# missing: Debian's `redis-server` package, through apt-get as root or with password-less sudo.
# Otherwise it fails and says how to install it: the tests never skip for want of it.
set -euo pipefail
command -v redis-server >/dev/null 2>&1 && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO="none"; fi
fi
if [ "$SUDO" != none ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing redis-server (Debian package) for the shared-pool tests" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  command -v redis-server >/dev/null 2>&1 && exit 0
fi
echo "redis-server is missing: the shared-pool tests start a real Redis server." >&2
echo "Install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis) and run npm test again." >&2
exit 1
