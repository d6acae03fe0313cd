import { assertTestedVersion, type TestedRange } from './common/tested-range'

/** The @langchain/core versions this entry is tested with. LangGraph (optional) is loaded only to interrupt. */
export const LANGCHAIN_TESTED: TestedRange = Object.freeze({ packageName: '@langchain/core', min: '1.0.0', below: '2.0.0' })

assertTestedVersion('langchain', LANGCHAIN_TESTED, import.meta.url)

export { langchainTools, type LangchainToolsOptions } from './langchain/langchain-tools'
export { DoguStructuredTool } from './langchain/dogu-structured-tool'
export { type ApprovalInterrupt, type ApprovalResume, isApprovalInterrupt } from './langchain/graph-approval'
export type { DoguToolOutput, ToolContent } from './langchain/tool-output'
export type { FrameworkApprover } from './common/framework-answer'
export type { ModelOutcome } from './common/model-outcome'
export { FrameworkVersionError, type TestedRange } from './common/tested-range'
