#!/usr/bin/env node
// dogu-mcp [config.json]: serves the tools of the plugins the config lists over stdio.
// The app stops when the client closes stdin, or on SIGINT/SIGTERM.
import { runDoguMcp } from '../lib/index.js'

runDoguMcp(process.argv.slice(2)).then((stop) => {
  let stopping
  const end = () => {
    stopping ??= stop().finally(() => process.exit(0))
  }
  process.stdin.once('end', end)
  process.once('SIGINT', end)
  process.once('SIGTERM', end)
}, (error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
