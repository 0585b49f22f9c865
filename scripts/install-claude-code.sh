#!/usr/bin/env bash
# Install the real Claude Code CLI (pinned version) into a cache folder outside the
# repository, for end-to-end tests that drive the router with a real client.
#
#   scripts/install-claude-code.sh            # install (or reuse) and print the binary path
#   CLAUDE_ROUTER_CACHE=/some/dir scripts/install-claude-code.sh
#
# - Idempotent: when the cached binary is present and reports the pinned version,
#   nothing is downloaded.
# - Works offline except for the npm registry (the native binary comes from the npm
#   optional package @anthropic-ai/claude-code-<platform>).
# - The last line on stdout is the absolute path of the runnable `claude` binary;
#   everything else (npm's output, progress) goes to stderr.
# - Cold install: ~170 MB download (npm cache), ~360 MB on disk, ~8 s on a fast link.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.328"
CACHE_ROOT="${CLAUDE_ROUTER_CACHE:-$HOME/.cache/claude-router}"
INSTALL_DIR="${CACHE_ROOT}/claude-code-${CLAUDE_CODE_VERSION}"

log() { printf '[install-claude-code] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Platform package name, as the wrapper's own install.cjs computes it.
platform_suffix() {
  local os cpu
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "unsupported OS $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) cpu=x64 ;;
    aarch64 | arm64) cpu=arm64 ;;
    *) die "unsupported CPU $(uname -m)" ;;
  esac
  if [[ "$os" == linux ]] && ! ldd --version 2>&1 | grep -qi -E 'glibc|gnu libc'; then
    if ldd --version 2>&1 | grep -qi musl; then
      echo "${os}-${cpu}-musl"
      return
    fi
  fi
  echo "${os}-${cpu}"
}

PLATFORM="$(platform_suffix)"
NATIVE_PKG="@anthropic-ai/claude-code-${PLATFORM}"
WRAPPER_REL="node_modules/@anthropic-ai/claude-code"
NATIVE_REL="node_modules/${NATIVE_PKG}/claude"

# True when $1/<native binary> exists, is executable and reports the pinned version.
binary_ok() {
  local bin="$1/${NATIVE_REL}" out home rc=0
  [[ -x "$bin" ]] || return 1
  # --version touches neither the network nor HOME; run it with an empty environment anyway.
  home="$(mktemp -d)"
  out="$(env -i PATH=/usr/bin:/bin HOME="$home" "$bin" --version 2>/dev/null)" || rc=$?
  rm -rf "$home"
  [[ $rc -eq 0 && "$out" == "${CLAUDE_CODE_VERSION}"* ]]
}

if binary_ok "$INSTALL_DIR"; then
  log "reusing ${INSTALL_DIR}"
  echo "${INSTALL_DIR}/${NATIVE_REL}"
  exit 0
fi

command -v npm >/dev/null || die "npm not found on PATH"
mkdir -p "$CACHE_ROOT"

# Install into a private staging folder, then move it into place: a half-finished
# install is never mistaken for a good one, and concurrent runs do not collide.
STAGING="$(mktemp -d "${CACHE_ROOT}/.claude-code-${CLAUDE_CODE_VERSION}.XXXXXX")"
trap 'rm -rf "$STAGING"' EXIT

log "installing @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} + ${NATIVE_PKG} into ${INSTALL_DIR}"
start=$(date +%s)
# - the native package is named explicitly so that an `omit=optional` npm config
#   cannot drop it;
# - the package declares engines.node >=22 but its native binary does not use Node:
#   engine-strict=false keeps a Node 20 machine (and a strict user config) working;
# - npm 11 may warn "install-scripts ... not yet covered by allowScripts"; whether or
#   not the postinstall ran, it is run explicitly below.
(
  cd "$STAGING"
  npm install \
    --prefix "$STAGING" \
    --no-save --no-package-lock --no-audit --no-fund --no-update-notifier \
    --include=optional --engine-strict=false \
    "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" \
    "${NATIVE_PKG}@${CLAUDE_CODE_VERSION}"
) 1>&2

[[ -x "$STAGING/${NATIVE_REL}" ]] || die "native binary missing after npm install: $STAGING/${NATIVE_REL}"

# The wrapper's postinstall replaces its bin/claude.exe placeholder (a shell stub) with
# the native binary. Run it ourselves when npm's install-script policy skipped it, so
# that node_modules/.bin/claude works too. Our printed path is the native binary, which
# does not depend on it.
if [[ "$(wc -c <"$STAGING/${WRAPPER_REL}/bin/claude.exe")" -lt 1000000 ]]; then
  log "running the skipped postinstall (node install.cjs)"
  (cd "$STAGING/${WRAPPER_REL}" && node install.cjs) 1>&2 || log "warning: install.cjs failed; the native binary is still usable"
fi

binary_ok "$STAGING" || die "installed binary does not run or does not report ${CLAUDE_CODE_VERSION}"

if [[ -e "$INSTALL_DIR" ]]; then
  if binary_ok "$INSTALL_DIR"; then
    log "another run finished first; keeping ${INSTALL_DIR}"
    echo "${INSTALL_DIR}/${NATIVE_REL}"
    exit 0
  fi
  log "removing a broken install at ${INSTALL_DIR}"
  rm -rf "$INSTALL_DIR"
fi
mv "$STAGING" "$INSTALL_DIR"
trap - EXIT

log "installed in $(($(date +%s) - start)) s, $(du -sh "$INSTALL_DIR" | cut -f1) on disk"
echo "${INSTALL_DIR}/${NATIVE_REL}"
