#!/usr/bin/env bash
# Installs Yarn (through corepack) and the workspace's dependencies on a fresh machine.
# The registry comes from npm's own configuration; no host is written into any file.
set -euo pipefail
cd "$(dirname "$0")/.."

registry="$(npm config get registry)"
export COREPACK_NPM_REGISTRY="${registry%/}"
export YARN_NPM_REGISTRY_SERVER="${registry%/}"
export COREPACK_ENABLE_DOWNLOAD_PROMPT=0

corepack enable
if [ "${CI:-}" = "true" ]; then
  yarn install --immutable
else
  yarn install
fi
