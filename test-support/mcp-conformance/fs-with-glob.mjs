// `node:fs` plus the `globSync` Node 20 lacks, for the conformance suite. It calls it only as
// `globSync('**/<file name>', { cwd })` (its tier-check command); any other pattern is refused.
import fs from 'node:fs'

export * from 'node:fs'
export default fs

const ANY_DEPTH = /^\*\*\/([^*?[\]{}/]+)$/

export const globSync = fs.globSync ?? ((pattern, { cwd = '.' } = {}) => {
  const name = ANY_DEPTH.exec(pattern)?.[1]
  if (!name) throw new Error(`globSync (Node 20 shim): only "**/<file name>" is supported, got ${JSON.stringify(pattern)}`)
  return fs.readdirSync(cwd, { recursive: true }).filter((file) => file === name || file.endsWith(`/${name}`))
})
