#!/usr/bin/env bash
# upload-artifact / download-artifact @v4 for this machine: see README.md. Artifacts live in
# $KR_ACT_ARTIFACTS/<run id>/<name>/, each file at its path relative to the least common ancestor
# of what was uploaded (for one file: its name), as v4 lays them out.
set -euo pipefail
fail() { echo "::error title=${0##*/} stand-in::$*"; exit 1; }
[ -n "${KR_ACT_ARTIFACTS:-}" ] || fail "KR_ACT_ARTIFACTS is not set: the runner names the artifact store"
cd "$GITHUB_WORKSPACE"
case "$1" in
upload)
  [[ "$IN_NAME" =~ ^[^\"\:\<\>\|\*\?\\/]+$ ]] || fail "name: '$IN_NAME' has a character an artifact name may not have"
  case "$IN_IF_NO_FILES_FOUND" in warn | error | ignore) ;; *) fail "if-no-files-found: '$IN_IF_NO_FILES_FOUND' is not warn, error or ignore" ;; esac
  case "$IN_OVERWRITE" in true | false) ;; *) fail "overwrite: '$IN_OVERWRITE' is not a boolean" ;; esac
  store="$KR_ACT_ARTIFACTS/$GITHUB_RUN_ID/$IN_NAME"
  files=()
  while IFS= read -r p; do
    [ -z "$p" ] && continue
    # shellcheck disable=SC2206 # a glob, as the action's path input is
    for f in $p; do [ -f "$f" ] && files+=("$f"); [ -d "$f" ] && while IFS= read -r g; do files+=("$g"); done < <(find "$f" -type f); done
  done <<<"$IN_PATH"
  if [ "${#files[@]}" -eq 0 ]; then
    case "$IN_IF_NO_FILES_FOUND" in
      error) fail "No files were found with the provided path: $IN_PATH. No artifacts will be uploaded." ;;
      warn) echo "::warning::No files were found with the provided path: $IN_PATH. No artifacts will be uploaded." ;;
    esac
    exit 0
  fi
  if [ -e "$store" ] && [ "$IN_OVERWRITE" != true ]; then
    fail "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run"
  fi
  rm -rf "$store"
  mkdir -p "$store"
  if [ "${#files[@]}" -eq 1 ]; then
    cp "${files[0]}" "$store/"
  else
    root=$(dirname "${files[0]}")
    for f in "${files[@]}"; do while [[ "$f" != "$root"/* ]]; do root=$(dirname "$root"); done; done
    for f in "${files[@]}"; do mkdir -p "$store/$(dirname "${f#"$root"/}")" && cp "$f" "$store/${f#"$root"/}"; done
  fi
  echo "artifact-id=$(cksum <<<"$GITHUB_RUN_ID/$IN_NAME" | cut -d' ' -f1)" >>"$GITHUB_OUTPUT"
  echo "upload-artifact stand-in: $IN_NAME: ${#files[@]} file(s)"
  ;;
download)
  [ -z "$IN_NAME" ] || [ -z "$IN_PATTERN" ] || echo "::warning::name and pattern were both given: pattern is ignored"
  case "$IN_MERGE_MULTIPLE" in true | false) ;; *) fail "merge-multiple: '$IN_MERGE_MULTIPLE' is not a boolean" ;; esac
  runs="$KR_ACT_ARTIFACTS/$IN_RUN_ID"
  dest=${IN_PATH:-.}
  mkdir -p "$dest"
  names=()
  if [ -n "$IN_NAME" ]; then
    [ -d "$runs/$IN_NAME" ] || fail "Unable to download artifact(s): Artifact not found for name: $IN_NAME"
    names=("$IN_NAME")
    cp -r "$runs/$IN_NAME/." "$dest/"
  else
    if [ -d "$runs" ]; then
      for d in "$runs"/*/; do
        n=$(basename "$d")
        # shellcheck disable=SC2053 # the pattern is a glob
        [ -z "$IN_PATTERN" ] || [[ "$n" == $IN_PATTERN ]] || continue
        names+=("$n")
        if [ "$IN_MERGE_MULTIPLE" = true ]; then cp -r "$d." "$dest/"; else mkdir -p "$dest/$n" && cp -r "$d." "$dest/$n/"; fi
      done
    fi
  fi
  echo "download-path=$(cd "$dest" && pwd)" >>"$GITHUB_OUTPUT"
  echo "download-artifact stand-in: ${#names[@]} artifact(s) into $dest"
  ;;
esac
