import { assertTestedVersion, type TestedRange } from './common/tested-range'

/** The `ai` versions this entry is tested with: importing it with another fails, naming them. */
export const AI_SDK_TESTED: TestedRange = Object.freeze({ packageName: 'ai', min: '6.0.0', below: '7.0.0' })

assertTestedVersion('ai-sdk', AI_SDK_TESTED, import.meta.url)

export { type AiSdkApproval, type AiSdkCallContext, type AiSdkTool, aiSdkTools, type AiSdkTools, type AiSdkToolsOptions } from './ai-sdk/ai-sdk-tools'
export type { AiSdkModelOutput, AiSdkToolOutput } from './ai-sdk/model-output'
export { auditRejections } from './ai-sdk/audit-rejections'
export { repairToolCall } from './ai-sdk/repair-tool-call'
export type { FrameworkApprover } from './common/framework-answer'
export { FrameworkVersionError } from './common/tested-range'
