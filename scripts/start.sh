#!/usr/bin/env bash
# Fresh machine to a running playground: install, build, start. A later run skips the
# install and the build when nothing they read changed since the last one (the stamp below).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/registry-env.sh

stamp=node_modules/.cache/dogu-start-stamp

# The hashes of yarn.lock and of the manifests and configs, the newest mtime under the
# workspaces' src/ and client/ (a deleted file changes its folder's), and which builds are missing. Node, not find/stat: their
# options differ between Linux and macOS.
state() {
  node - <<'EOF'
const { createHash } = require('node:crypto')
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs')
const { join } = require('node:path')
const hash = createHash('sha256')
const add = (file) => { if (existsSync(file)) hash.update(`${file}\n`).update(readFileSync(file)) }
add('yarn.lock')
add('package.json')
let newest = 0
const walk = (dir) => {
  newest = Math.max(newest, statSync(dir).mtimeMs)
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'lib', 'dist'].includes(entry.name)) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path)
    else if (entry.isFile()) newest = Math.max(newest, statSync(path).mtimeMs)
  }
}
for (const base of ['packages', 'external']) {
  if (!existsSync(base)) continue
  for (const name of readdirSync(base).sort()) {
    const folder = join(base, name)
    for (const file of ['package.json', 'tsconfig.json', 'vite.config.ts']) add(join(folder, file))
    for (const dir of ['src', 'client']) if (existsSync(join(folder, dir))) walk(join(folder, dir))
    if (existsSync(join(folder, 'src/index.ts')) && !existsSync(join(folder, 'lib'))) hash.update(`unbuilt ${folder}\n`)
  }
}
for (const file of ['scripts/build.mjs', 'scripts/setup.sh', 'tsconfig.base.json']) add(file)
console.log(`${hash.digest('hex')} ${newest}`)
EOF
}

if [ -f "$stamp" ] && [ "$(state)" = "$(cat "$stamp")" ]; then
  # stderr: piped into a script, stdout is the playground's transcript.
  echo "start.sh: no changes since the last build, skipping install and build (rm $stamp to force them)." >&2
else
  bash scripts/setup.sh
  yarn build
  mkdir -p "$(dirname "$stamp")"
  state > "$stamp"
fi
yarn start "$@"
