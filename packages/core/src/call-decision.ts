import { permissionOf, requestFor } from './call-request'
import type { AuthorizeResult, PermissionGate } from './permission-gate'
import type { ParseStage } from './pipeline/parse-stage'
import { isPromise } from './pipeline/stage'
import type { ValidateStage } from './pipeline/validate-stage'
import type { ModelToolCall } from './tool-call'
import type { PermissionSpec } from './types/effect'

/**
 * What would become of a call now, asked before it is made (`Toolset.decide`): what a
 * framework's `needsApproval` wants to know. `ask`: a person must approve it (the framework
 * asks its user, and passes the answer to `execute` as `answers`); `allow` and `deny` are
 * the rules' (grants', modes') decision, which `execute` applies again; `invalid`: the call
 * cannot run as sent (an unknown tool, arguments that neither parse, repair nor validate),
 * and `execute` answers with why.
 */
export type CallDecision =
  | { decision: 'allow' | 'ask' | 'deny'; tool: string; permission: Readonly<PermissionSpec>; reason?: string }
  | { decision: 'invalid'; tool?: string }

/**
 * Parses, repairs, validates and authorizes a call without making it: nothing is asked,
 * run, counted, announced or audited (the request is a `probe`).
 */
export function decideCall(parse: ParseStage, validate: ValidateStage, gate: PermissionGate | undefined, input: ModelToolCall): CallDecision | Promise<CallDecision> {
  const parsed = parse.read(input)
  if ('refused' in parsed) return typeof parsed.name === 'string' && parsed.entry ? { decision: 'invalid', tool: parsed.name } : { decision: 'invalid' }
  const call = validate.probe(parsed)
  const tool = parsed.entry.tool.name
  if (!call) return { decision: 'invalid', tool }
  let permission: PermissionSpec
  try {
    permission = permissionOf(call)
  } catch {
    // `execute` ends it with the tool's error.
    return { decision: 'invalid', tool }
  }
  if (!gate) return { decision: (permission.effect ?? call.tool.traits.effect) === 'read' ? 'allow' : 'deny', tool, permission }
  const request = requestFor(call, permission, call.tool.confirm)
  request.probe = true
  let result: AuthorizeResult | Promise<AuthorizeResult>
  try {
    result = gate.authorize(request)
  } catch {
    return { decision: 'deny', tool, permission }
  }
  return isPromise(result) ? result.then((answer) => outcome(answer, tool, permission), () => ({ decision: 'deny', tool, permission })) : outcome(result, tool, permission)
}

function outcome(result: AuthorizeResult | undefined, tool: string, permission: PermissionSpec): CallDecision {
  const decision = result?.decision
  // A gate's answer that is no decision is a denial when the call is made (`no_decision`).
  if (decision !== 'allow' && decision !== 'ask' && decision !== 'deny') return { decision: 'deny', tool, permission }
  return result!.reason === undefined ? { decision, tool, permission } : { decision, tool, permission, reason: result!.reason }
}
