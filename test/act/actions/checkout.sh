#!/usr/bin/env bash
# actions/checkout, for the emulated origin KR_ACT_ORIGIN (a bare repository): see README.md.
set -euo pipefail
fail() { echo "::error title=checkout stand-in::$*"; exit 1; }
[ -n "${KR_ACT_ORIGIN:-}" ] || fail "KR_ACT_ORIGIN is not set: the runner names the origin repository"
[ "$IN_REPOSITORY" = "$GITHUB_REPOSITORY" ] || fail "repository: only $GITHUB_REPOSITORY is served here, not $IN_REPOSITORY"
[[ "$IN_FETCH_DEPTH" =~ ^[0-9]+$ ]] || fail "fetch-depth: '$IN_FETCH_DEPTH' is not a number"
case "$IN_PATH" in /* | *..*) fail "path: '$IN_PATH' is not under the workspace" ;; esac
dir="$GITHUB_WORKSPACE${IN_PATH:+/$IN_PATH}"
ref=${IN_REF:-$GITHUB_REF}
sha=$GITHUB_SHA
[ -z "$IN_REF" ] || sha=$(git --git-dir="$KR_ACT_ORIGIN" rev-parse --verify "$IN_REF^{commit}") || fail "ref: $IN_REF is not in $GITHUB_REPOSITORY"
mkdir -p "$dir"
cd "$dir"
if [ -e .git ]; then rm -rf .git; fi
find . -mindepth 1 -maxdepth 1 -exec rm -rf {} +
git init -q
git remote add origin "file://$KR_ACT_ORIGIN"
depth=()
[ "$IN_FETCH_DEPTH" = 0 ] || depth=(--depth "$IN_FETCH_DEPTH")
case "$ref" in
  refs/heads/*) track="refs/remotes/origin/${ref#refs/heads/}" ;;
  refs/pull/*) track="refs/remotes/pull/${ref#refs/pull/}" ;;
  refs/tags/*) track=$ref ;;
  *) track=refs/remotes/origin/checkout ;;
esac
if [ "$IN_FETCH_DEPTH" = 0 ]; then
  git fetch -q --no-tags origin '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*'
  git fetch -q --no-tags origin "+$sha:$track"
else
  git fetch -q --no-tags "${depth[@]}" origin "+$sha:$track"
fi
case "$ref" in
  refs/heads/*) git checkout -q --force -B "${ref#refs/heads/}" "$track" ;;
  *) git checkout -q --force --detach "$track" ;;
esac
[ "$(git rev-parse HEAD)" = "$sha" ] || fail "HEAD is $(git rev-parse HEAD), not $sha"
echo "checkout stand-in: $GITHUB_REPOSITORY $ref at $sha (fetch-depth $IN_FETCH_DEPTH) in $dir"
