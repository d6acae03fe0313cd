// The second process of the RunState test: the same agent over a Dogu toolset built anew (no
// grant, no memory of the first process), the serialized state read back, its interruption
// approved here and the run taken to its end. Prints one JSON line of what came of it.
// Arguments: the state's file, and `deny` to add a deny rule in this process first.
import { readFileSync } from 'node:fs'
import { RunState, run } from '@openai/agents'
import { assistantMessage } from '@openai/agents/testing'
import { doguSetup, scriptedAgent, toolOutputs } from './dogu-setup'

const [stateFile, variant] = process.argv.slice(2)
const dogu = doguSetup()
if (variant === 'deny') dogu.engine.addRule({ permission: 'tool:save-note', decision: 'deny', name: 'notes frozen since the restart' })
const { agent, model } = scriptedAgent(dogu, [[assistantMessage('done')]])
const state = await RunState.fromString(agent, readFileSync(stateFile!, 'utf8'))
const interruptions = state.getInterruptions()
for (const item of interruptions) state.approve(item)
const result = await run(agent, state)
await dogu.audit.flush()
console.log(JSON.stringify({
  approved: interruptions.map((item) => item.name),
  finalOutput: result.finalOutput,
  runs: dogu.runs,
  told: toolOutputs(model.calls[0]!.request),
  records: await dogu.audit.query(),
}))
await dogu.stop()
