import type { ToolResult } from '../tool-result'

/**
 * Why the tools host could not start a resumed call: set as `failure` on what
 * `ResumeHandler.resume` throws, and passed on as `AnswerResult.failure`, so a host tells it
 * in a person's locale. `resumed`: this instance resumed the request already (its call runs
 * once); `undefined_tool`: the tool is no longer defined here; `not_object`: the arguments are
 * not an object; `hidden`: the tool's visibility hides it from the session (`session`, its
 * id) now; `invalid`: the arguments no longer validate (`result`, the pipeline's refusal).
 */
export type ResumeFailure =
  | { kind: 'resumed' }
  | { kind: 'undefined_tool'; tool: string }
  | { kind: 'not_object' }
  | { kind: 'hidden'; tool: string; session: string }
  | { kind: 'invalid'; result: ToolResult }
