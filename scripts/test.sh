#!/usr/bin/env bash
# Fresh machine to a full check: install, workspace constraints, build (with type checks), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
registry="$(npm config get registry)"
export YARN_NPM_REGISTRY_SERVER="${registry%/}"
yarn constraints
yarn build
yarn typecheck
yarn test
