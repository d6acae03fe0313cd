#!/usr/bin/env bash
# Fresh machine to a running playground: install, build, start.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export YARN_NPM_REGISTRY_SERVER="$(npm config get registry)"
yarn build
yarn start "$@"
