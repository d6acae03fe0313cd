import type { ActiveCall } from '../active-call'
import { messageOf } from '../error-message'
import type { Logger } from '../logger'
import { normalizeOutput } from '../normalize-output'
import { ToolDenial } from '../tool-denial'
import { ToolRateLimit } from '../tool-rate-limit'
import type { ToolResult } from '../tool-result'
import type { ArgumentProblem } from '../result-params'
import { abortedResult, callResult, codedResult, deniedResult } from './call-results'
import { denialOf } from '../messages/denial-of'

/** What a tool's `run` returned, made a result: its output schema (`output`) checked. */
export function outputResult(call: ActiveCall, output: unknown): ToolResult {
  if (typeof output === 'string' && !call.entry.outputValidator) return callResult(call, 'ok', output)
  const { content, images, audio, resources, data, artifacts } = normalizeOutput(output)
  const outputValidator = call.entry.outputValidator
  let checked = data
  if (outputValidator) {
    const verdict = outputValidator(data)
    if (!verdict.ok) return codedResult(call, 'error', 'output_invalid', { problems: verdict.issues.map(({ message: _, ...problem }) => problem as ArgumentProblem) })
    checked = verdict.value
  }
  const result = callResult(call, 'ok', content)
  if (images) result.images = images
  if (audio) result.audio = audio
  if (resources) result.resources = resources
  if (checked !== undefined) result.data = checked
  if (artifacts) result.artifacts = artifacts
  return result
}

/** What a tool's `run` threw, made a result: its abort, a denial, its upstream's rate limit, or an error. */
export function errorResult(call: ActiveCall, error: unknown, logger: Logger): ToolResult {
  if (call.aborted) return abortedResult(call)
  // A tool's own `call.deny(reason)` is told in its words; a refused `call.ask` as the approval ended.
  if (error instanceof ToolDenial) return deniedResult(call, error.denial ? denialOf(error.reason, error.denial, { cause: 'not_approved' }) : { cause: 'tool', reason: String(error.reason) })
  if (error instanceof ToolRateLimit) return limitedResult(call, error)
  logger.debug('tool %s failed: %s', call.name, error)
  return codedResult(call, 'error', 'tool_error', { message: messageOf(error) })
}

/** A tool's upstream refused for now (`ToolRateLimit`). */
function limitedResult(call: ActiveCall, error: ToolRateLimit): ToolResult {
  const retry = error.retryAfterMs
  const retryAfterMs = typeof retry === 'number' && Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : undefined
  const result = codedResult(call, 'rate_limited', 'rate_limited', { source: 'tool', reason: String(error.reason), ...(retryAfterMs ? { retryAfterMs } : {}) })
  if (retryAfterMs) result.retryAfterMs = retryAfterMs
  return result
}
