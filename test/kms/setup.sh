#!/usr/bin/env bash
# Installs the AWS emulator that __tests__/integration/kms-emulator.test.ts (KMS, STS) and
# source-bucket.test.ts (S3, through __tests__/helpers/s3.ts) start:
# moto's server (PyPI), with the dependencies pinned in requirements.txt, into a Python venv
# cached under $HOME keyed by the Python version and the pins, and links it as
# test/kms/bin/moto_server. A warm run only checks the venv and links; a cold one takes ~20 s.
#
# No emulator is installed for Google Cloud KMS, Azure Key Vault or Vault: none can be had from
# the registries this project reaches in a reasonable build time; their services are tested
# against recorded requests and responses in __tests__/unit/kms.test.ts.
set -euo pipefail
cd "$(dirname "$0")"

cache_root="${KR_KMS_CACHE_DIR:-$HOME/.cache/kr-kms}"
python=${PYTHON:-python3}
pyver=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
pins=$(grep -v '^#' requirements.txt | sha256sum | cut -c1-16)
venv="$cache_root/moto-py$pyver-$pins"

t0=$SECONDS
if [ ! -f "$venv/.complete" ] || [ ! -x "$venv/bin/moto_server" ]; then
  echo "test/kms: installing moto into $venv"
  rm -rf "$venv"
  mkdir -p "$cache_root"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r requirements.txt
  "$venv/bin/python" -c 'import moto.server, flask, flask_cors' # fails now rather than in the test
  touch "$venv/.complete"
  # Keep the two newest venvs.
  ls -dt "$cache_root"/moto-* 2>/dev/null | tail -n +3 | xargs -r rm -rf
  echo "test/kms: moto installed in $((SECONDS - t0))s"
else
  echo "test/kms: moto cached at $venv"
fi

mkdir -p bin
ln -sfn "$venv/bin/moto_server" bin/moto_server
echo "test/kms: ready: $(pwd)/bin/moto_server"
