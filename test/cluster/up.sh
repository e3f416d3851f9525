#!/usr/bin/env bash
# npm run cluster:up -- --tier a|b --dir DIR [--feature-gates Name=true|false,...]
# Builds the cluster binary if needed (cached), then starts the cluster in the foreground:
# the last line printed is KUBECONFIG=<path>; it runs until `npm run cluster:down -- --dir DIR` or SIGTERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$here/bin/testcluster" ] || bash "$here/build.sh" >&2
exec "$here/bin/testcluster" up "$@"
