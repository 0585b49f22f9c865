#!/usr/bin/env bash
# A "VS Code executable" for @vscode/test-electron / @vscode/test-cli on machines without
# desktop VS Code: runs the extension tests they ask for in code-server + headless Chromium
# and exits with the tests' exit code. See test/vscode/codeShim.ts.
#
#   scripts/code-shim.sh --extensionDevelopmentPath=DIR --extensionTestsPath=FILE [--user-data-dir=DIR] [--extensions-dir=DIR] [FOLDER]
#
# Needs `npx tsc -p tsconfig.test.json` (out/test/vscode/codeShim.js) and
# scripts/install-code-server.sh (code-server + Chromium). Runs with the project's Node.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shim="$repo/out/test/vscode/codeShim.js"
if [[ ! -f "$shim" ]]; then
  echo "code-shim: $shim missing; run: npx tsc -p tsconfig.test.json" >&2
  exit 2
fi
exec node "$shim" "$@"
