#!/usr/bin/env bash
# npm run cluster:down -- --dir DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/bin/testcluster" down "$@"
