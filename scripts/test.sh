#!/usr/bin/env bash
# Fresh machine to a full check: install, workspace constraints, build (with type checks), tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/registry-env.sh
bash scripts/setup.sh
yarn constraints
yarn build
yarn typecheck
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
yarn test --reporter=default --reporter=json --outputFile.json="$report" || status=$?
# One plain closing line, whatever the reporter printed above it.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed`)
' "$report" || true
exit "$status"
