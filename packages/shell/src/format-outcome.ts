import type { CapturedOutput } from './output-buffer'
import type { ProcessOutcome, ProcessStatus } from './process-table'

const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`

const HEADLINES: Record<ProcessStatus, (outcome: ProcessOutcome, timeout: number) => string> = {
  exited: (outcome) => outcome.exitCode !== null
    ? `Exit code ${outcome.exitCode} (${seconds(outcome.durationMs)}).`
    : `Ended by ${outcome.signal} (${seconds(outcome.durationMs)}).`,
  timed_out: (_, timeout) => `Timed out after ${seconds(timeout)}: the command and everything it started were terminated. Output so far:`,
  cancelled: (outcome) => outcome.pid === undefined
    ? 'Cancelled before the command started.'
    : 'Cancelled: the command and everything it started were terminated. Output so far:',
  limit_exceeded: (outcome) => `Stopped by the sandbox: ${outcome.limit ?? 'a limit was exceeded'}; the command and everything it started were terminated. Output so far:`,
  outcome_unknown: (outcome) => `Outcome unknown: process group ${outcome.pid} did not end after SIGKILL and is still tracked. Output so far:`,
}

/** The text the model reads for a finished command. */
export function formatOutcome(outcome: ProcessOutcome, timeout: number): string {
  const parts = [HEADLINES[outcome.status](outcome, timeout)]
  if (outcome.leftovers) parts.push('Processes it left running in the background were terminated.')
  section(parts, 'stdout', outcome.stdout)
  section(parts, 'stderr', outcome.stderr)
  if (!outcome.stdout.bytes && !outcome.stderr.bytes) parts.push('(no output)')
  return parts.join('\n')
}

function section(parts: string[], name: string, output: CapturedOutput) {
  if (!output.bytes) return
  const note = output.omittedBytes ? ` (${output.bytes} bytes, ${output.omittedBytes} omitted from the middle)` : ''
  parts.push(`--- ${name}${note} ---`, output.text.endsWith('\n') ? output.text.slice(0, -1) : output.text)
}
