#!/usr/bin/env bash
# setup-go, setup-node and cache for this machine: see README.md. Nothing is downloaded, restored or
# saved; what the real actions would refuse, or what would make them set up something other than what
# this machine has, fails the step.
set -euo pipefail
fail() { echo "::error title=$1 stand-in::$2"; exit 1; }
bool() { case "$2" in true | false) ;; *) fail "$1" "'$2' is not a boolean" ;; esac; }
cd "$GITHUB_WORKSPACE"
# A version spec ('1.26', '24', '1.26.x', '>=24') against the version found ('1.26.8').
matches() {
  local spec=${1#v} found=$2
  case "$spec" in
    '>='*) [ "$(printf '%s\n%s\n' "${spec#>=}" "$found" | sort -V | head -1)" = "${spec#>=}" ] ;;
    *) spec=${spec%.x}; [ "$found" = "$spec" ] || [[ "$found" == "$spec".* ]] ;;
  esac
}
case "$1" in
go)
  bool setup-go "$IN_CACHE"
  spec=$IN_GO_VERSION
  if [ -z "$spec" ] && [ -n "$IN_GO_VERSION_FILE" ]; then
    [ -f "$IN_GO_VERSION_FILE" ] || fail setup-go "go-version-file: $IN_GO_VERSION_FILE does not exist"
    spec=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$IN_GO_VERSION_FILE")
  fi
  [ -n "$spec" ] || fail setup-go "neither go-version nor go-version-file is set"
  found=$(go env GOVERSION | sed 's/^go//')
  matches "$spec" "$found" || fail setup-go "go-version '$spec' asks for a Go this machine does not have (go $found is on PATH)"
  if [ "$IN_CACHE" = true ]; then
    dep=${IN_CACHE_DEPENDENCY_PATH:-go.sum}
    compgen -G "$dep" >/dev/null || fail setup-go "cache: true needs $dep in the repository (Dependencies file is not found)"
  fi
  echo "go-version=$found" >>"$GITHUB_OUTPUT"
  echo "setup-go stand-in: go $found matches '$spec'"
  ;;
node)
  spec=$IN_NODE_VERSION
  if [ -z "$spec" ] && [ -n "$IN_NODE_VERSION_FILE" ]; then
    [ -f "$IN_NODE_VERSION_FILE" ] || fail setup-node "node-version-file: $IN_NODE_VERSION_FILE does not exist"
    spec=$(head -1 "$IN_NODE_VERSION_FILE")
  fi
  found=$(node --version | sed 's/^v//')
  [ -z "$spec" ] || matches "$spec" "$found" || fail setup-node "node-version '$spec' asks for a Node this machine does not have (node $found is on PATH)"
  case "$IN_CACHE" in
    '') ;;
    npm) compgen -G "${IN_CACHE_DEPENDENCY_PATH:-package-lock.json}" >/dev/null || fail setup-node "cache: npm needs ${IN_CACHE_DEPENDENCY_PATH:-package-lock.json} (Dependencies lock file is not found)" ;;
    yarn | pnpm) ;;
    *) fail setup-node "cache: '$IN_CACHE' is not npm, yarn or pnpm" ;;
  esac
  echo "node-version=v$found" >>"$GITHUB_OUTPUT"
  echo "setup-node stand-in: node $found matches '${spec:-any}'"
  ;;
cache)
  bool cache "$IN_FAIL_ON_CACHE_MISS"
  [ -n "$(tr -d '[:space:]' <<<"$IN_PATH")" ] || fail cache "Input required and not supplied: path"
  [ -n "$IN_KEY" ] || fail cache "Input required and not supplied: key"
  [[ "$IN_KEY" != *,* ]] || fail cache "Key Validation Error: $IN_KEY cannot contain commas."
  [ "${#IN_KEY}" -le 512 ] || fail cache "Key Validation Error: $IN_KEY cannot be larger than 512 characters."
  # hashFiles() of files that do not exist is '': a key ending in '-' is a hash of nothing.
  [[ "$IN_KEY" != *- ]] || fail cache "key '$IN_KEY' ends in '-': a hashFiles() in it matched no file"
  [ "$IN_FAIL_ON_CACHE_MISS" != true ] || fail cache "Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: $IN_KEY"
  echo "cache-hit=false" >>"$GITHUB_OUTPUT"
  echo "cache stand-in: miss for $IN_KEY (paths: $(tr '\n' ' ' <<<"$IN_PATH"))"
  ;;
esac
