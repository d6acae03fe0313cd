import type { ToolResult } from '@dogu/core'

/**
 * What every adapter tells the model of a Dogu result besides its text: the status, the
 * code, the invalid paths and the background task. The text (`content`) is Dogu's own,
 * in English, the same the model reads through any host.
 */
export interface ModelOutcome {
  status: ToolResult['status']
  content: string
  code?: ToolResult['code']
  /** On `invalid_arguments`: the argument paths that were refused (`$.city`). */
  paths?: string[]
  /** On `background`: the task to ask about (`task_status`). */
  taskId?: string
  /** The tool's structured result, when it gave one. */
  data?: unknown
}

/** A Dogu result as what the model is shown. */
export function outcomeOf(result: ToolResult): ModelOutcome {
  const outcome: ModelOutcome = { status: result.status, content: result.content }
  if (result.code) outcome.code = result.code
  if (result.taskId) outcome.taskId = result.taskId
  if (result.data !== undefined) outcome.data = result.data
  const paths = invalidPaths(result)
  if (paths) outcome.paths = paths
  return outcome
}

/** The paths an `invalid_arguments` result names, when its arguments parsed but failed the schema. */
function invalidPaths(result: ToolResult): string[] | undefined {
  if (result.code !== 'invalid_arguments') return undefined
  const params = result.params as { kind?: string; problems?: { path: string }[] } | undefined
  if (params?.kind !== 'validation' || !Array.isArray(params.problems)) return undefined
  return [...new Set(params.problems.map((problem) => problem.path))]
}
