import type { ActiveCall } from '../active-call'
import { messageOf } from '../error-message'
import type { Logger } from '../logger'
import { normalizeOutput } from '../normalize-output'
import { ToolDenial } from '../tool-denial'
import { ToolRateLimit } from '../tool-rate-limit'
import type { ToolResult } from '../tool-result'
import { abortedResult, callResult, deniedResult } from './call-results'

/** What a tool's `run` returned, made a result: its output schema (`output`) checked. */
export function outputResult(call: ActiveCall, output: unknown): ToolResult {
  if (typeof output === 'string' && !call.entry.outputValidator) return callResult(call, 'ok', output)
  const { content, images, audio, resources, data, artifacts } = normalizeOutput(output)
  const outputValidator = call.entry.outputValidator
  let checked = data
  if (outputValidator) {
    const verdict = outputValidator(data)
    if (!verdict.ok) return callResult(call, 'error', `Error: the tool's result does not match its output schema (${verdict.issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}).`, 'output_invalid')
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
  if (error instanceof ToolDenial) return deniedResult(call, error.reason)
  if (error instanceof ToolRateLimit) return limitedResult(call, error)
  logger.debug('tool %s failed: %s', call.name, error)
  return callResult(call, 'error', `Error: ${messageOf(error)}`, 'tool_error')
}

/** A tool's upstream refused for now (`ToolRateLimit`). */
function limitedResult(call: ActiveCall, error: ToolRateLimit): ToolResult {
  const reason = String(error.reason)
  const result = callResult(call, 'rate_limited', reason.startsWith('Rate limited:') ? reason : `Rate limited: ${reason}`, 'rate_limited')
  const retry = error.retryAfterMs
  if (typeof retry === 'number' && Number.isFinite(retry) && retry > 0) result.retryAfterMs = Math.ceil(retry)
  return result
}
