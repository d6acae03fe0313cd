// @dogu/frameworks/openai-agents against the real @openai/agents 0.20, its model the SDK's
// ScriptedModel: what the model is told (its next request), what the tools did (their run
// counter) and what the audit log holds.
import { run } from '@openai/agents'
import { assistantMessage, functionCall } from '@openai/agents/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { type DoguSetup, doguSetup, scriptedAgent, toolOutputs } from './openai-agents/dogu-setup'

const setups: DoguSetup[] = []
afterEach(async () => {
  for (const dogu of setups.splice(0)) await dogu.stop()
})

function setup(...args: Parameters<typeof doguSetup>) {
  const dogu = doguSetup(...args)
  setups.push(dogu)
  return dogu
}

async function records(dogu: DoguSetup) {
  await dogu.audit.flush()
  return dogu.audit.query()
}

describe('agentsTools: the toolset as FunctionTools', () => {
  it('an allowed read runs through Dogu, and the model reads its text', async () => {
    const dogu = setup()
    const { agent, model } = scriptedAgent(dogu, [
      [functionCall('lookup', { q: 'dogu' }, { callId: 'c1' })],
      [assistantMessage('done')],
    ])
    const result = await run(agent, 'look it up')
    expect(result.interruptions).toEqual([])
    expect(result.finalOutput).toBe('done')
    expect(dogu.runs).toEqual(['lookup dogu'])
    expect(toolOutputs(model.calls[1]!.request)).toEqual({ c1: 'found dogu' })
    expect(await records(dogu)).toMatchObject([{ tool: 'lookup', callId: 'c1', outcome: 'ok', caller: { sessionId: 'thread-1' } }])
  })
})
