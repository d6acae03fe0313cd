#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { startScriptedServer } from '@dogu/agent'
import { modelFromEnv } from './chat'
import { demoModel } from './demo-model'
import { startPlayground } from './start-playground'

export { type Chat, type ChatOptions, createChat, type ModelConfig, modelFromEnv } from './chat'
export * from './commands'
export { demoModel } from './demo-model'
export * from './line-reader'
export * from './start-playground'
export * from './terminal-asker'

// Run when started as a program (`yarn start`, the bin), not when imported.
if (isMain()) {
  main().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}

/**
 * `--demo` (`yarn demo`): a scripted model on loopback, no network, no key. Otherwise the
 * model comes from DOGU_BASE_URL / DOGU_MODEL / DOGU_API_KEY, and without them the prompt
 * takes commands only.
 */
async function main() {
  const webui = { port: 5177, maxPort: 5199 }
  if (!process.argv.includes('--demo')) return startPlayground({ webui, model: modelFromEnv(process.env) })
  const server = await startScriptedServer({ script: demoModel, model: 'dogu-demo' })
  try {
    await startPlayground({ webui, model: { baseURL: server.baseURL, model: 'dogu-demo' } })
  } finally {
    await server.close()
  }
}

function isMain(): boolean {
  try {
    return !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}
