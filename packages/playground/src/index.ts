#!/usr/bin/env node
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startScriptedServer } from '@dogu/agent'
import { modelFromEnv } from './chat'
import { DataInUseError } from './data-lock'
import { demoModel, sloppyDemoModel } from './demo-model'
import { startPlayground } from './start-playground'

export { type Chat, type ChatOptions, createChat, type ModelConfig, modelFromEnv } from './chat'
export * from './commands'
export * from './data-lock'
export { demoModel, SLOPPY_WAYS, type SloppyWay, sloppyDemoModel } from './demo-model'
export * from './line-reader'
export * from './start-playground'
export * from './terminal-asker'

// Run when started as a program (`yarn start`, the bin), not when imported.
if (isMain()) {
  main().catch((error) => {
    // The user's mistakes get their message alone; anything else its stack.
    const own = DataInUseError.is(error) || String(error?.code).startsWith('ERR_PARSE_ARGS_')
    console.error(own ? error.message : error)
    process.exitCode = 1
  })
}

/**
 * `--demo` (`yarn demo`): a scripted model on loopback, no network, no key; with `--sloppy`
 * (`yarn demo --sloppy`) its calls come broken, to watch the repair mend them. Otherwise the
 * model comes from DOGU_BASE_URL / DOGU_MODEL / DOGU_API_KEY, and without them the prompt
 * takes commands only. `--data DIR` (or DOGU_DATA) is the data folder, `data` by default.
 */
async function main() {
  const { values } = parseArgs({ options: { demo: { type: 'boolean' }, sloppy: { type: 'boolean' }, data: { type: 'string' } } })
  const dataDir = values.data || process.env.DOGU_DATA?.trim() || 'data'
  const webui = { port: 5177, maxPort: 5199 }
  // `--sloppy` is a mode of the demo model: it implies `--demo`.
  if (!values.demo && !values.sloppy) return startPlayground({ webui, dataDir, model: modelFromEnv(process.env) })
  const server = await startScriptedServer({ script: values.sloppy ? sloppyDemoModel : demoModel, model: 'dogu-demo' })
  try {
    await startPlayground({ webui, dataDir, model: { baseURL: server.baseURL, model: 'dogu-demo' } })
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
