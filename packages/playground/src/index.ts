#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startPlayground } from './start-playground'

export * from './commands'
export * from './line-reader'
export * from './start-playground'
export * from './terminal-asker'

// Run when started as a program (`yarn start`, the bin), not when imported.
if (isMain()) {
  startPlayground().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}

function isMain(): boolean {
  try {
    return !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}
