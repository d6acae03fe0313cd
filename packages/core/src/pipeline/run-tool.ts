import type { ActiveCall } from '../active-call'

/** The tool's `run` for the call, inside the call's span when it is traced. */
export function runTool(call: ActiveCall): unknown {
  // Its quota units are spent: the tool ran.
  if (call.reservation) call.toolStarted = true
  return call.span ? call.span.run(() => call.tool.run(call.input as any, call)) : call.tool.run(call.input as any, call)
}
