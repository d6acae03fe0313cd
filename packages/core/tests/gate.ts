import type { ApprovalOutcome, ApprovalRequest, AuthorizeRequest, AuthorizeResult, PermissionGate } from '../src'

/** A permission gate for tests: decides with `decide`, answers asks with `answer`. */
export function testGate(
  decide: (request: AuthorizeRequest) => AuthorizeResult = () => ({ decision: 'allow' }),
  answer: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalOutcome> = async () => ({ decision: 'allow' }),
) {
  const log: string[] = []
  const gate: PermissionGate = {
    authorize(request) {
      log.push(`authorize ${request.permission.name}${request.permission.target ? ':' + request.permission.target : ''} ${request.effect}`)
      return decide(request)
    },
    approve(request, signal) {
      log.push(`approve ${request.tool}${request.reason ? ' ' + request.reason : ''}`)
      return answer(request, signal)
    },
  }
  return { gate, log }
}
