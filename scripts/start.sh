#!/usr/bin/env bash
# Fresh machine to a running playground: install, build, start.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/registry-env.sh
bash scripts/setup.sh
yarn build
yarn start "$@"
