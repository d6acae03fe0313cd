/**
 * `@dogu/frameworks/openai-agents`: Dogu's tool pipeline (rules, approvals, sandbox, quotas,
 * audit) under OpenAI Agents JS. `agentsTools(toolset)` gives the SDK's `FunctionTool`s; the
 * run's interruptions are Dogu's questions.
 */
import { assertTestedVersion, type TestedRange } from './common/tested-range'

/** The `@openai/agents` versions this entry is tested with; another fails at import, naming them. */
export const AGENTS_TESTED: Readonly<TestedRange> = Object.freeze({ packageName: '@openai/agents', min: '0.20.0', below: '0.21.0' })

assertTestedVersion('openai-agents', AGENTS_TESTED, import.meta.url)

export { type AgentsTool, agentsTools } from './openai-agents/agents-tools'
export type { AgentsToolsOptions } from './openai-agents/agents-options'
export type { AgentsOutcome, AgentsToolOutput } from './openai-agents/model-output'
export { agentsRejectionFormatter } from './openai-agents/rejection-formatter'
export type { FrameworkApprover } from './common/framework-answer'
export { FrameworkVersionError, type TestedRange } from './common/tested-range'
