#!/usr/bin/env bash
# Installs Yarn (through corepack) and the workspace's dependencies on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/registry-env.sh

corepack enable
if [ "${CI:-}" = "true" ]; then
  yarn install --immutable
else
  yarn install
fi
