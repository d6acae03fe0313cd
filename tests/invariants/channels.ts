import type { AuditRecord, DecisionEvent, PermissionRequest, ToolResult } from '@dogu/core'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import type { LogLine } from '../../test-support/log-guard'

// Everything a person, a log, an event, the console, the audit log, a span or the model can
// see of a run, collected so the invariants can read it afterwards. Each channel is kept as it
// arrived.

/** What the scripted approver did with one question. */
export interface ApproverAction {
  callId?: string
  tool: string
  /** What it answered, and with which edited arguments (masked, as it was shown them). */
  answer: 'allow' | 'deny' | 'silent' | 'cancel' | 'edit'
  value?: Record<string, unknown>
  /** What `respond` returned for it; in chat, `accepted` or `refused` by whether the edit was decided, or `closed` when the question closed before the person spoke. */
  verdict?: string
  /** In chat: the call as the bot's reply to the edit says it runs (`实际运行的参数：{…}`). */
  echo?: Record<string, unknown>
  /**
   * A framework's user, asked before the call was made (`toolset.decide` said `ask`): Dogu
   * takes their answer only if, as the call is made, it still would ask.
   */
  framework?: true
}

/** What a third party did to a file between a question and its answer. */
export interface Tampering {
  callId: string
  path: string
  kind: 'rewrite' | 'same' | 'remove'
}

/** A middleware's rewrite: the arguments it passed to `next` (masked, as it saw them). */
export interface Rewrite {
  callId: string
  tool: string
  args: Record<string, unknown>
}

export interface Observations {
  /** Every question shown to an asker, or to a framework's user, as serialized text (what a person sees). */
  questions: string[]
  /** The framework variant: what `toolset.decide` said of each call, serialized (an adapter may show or log it). */
  framework: string[]
  /** The same questions as they came, with their previews: what the person was shown. */
  asked: Readonly<PermissionRequest>[]
  approver: ApproverAction[]
  tampered: Tampering[]
  /** In chat: every message the bot posted in the channel, then every reply it gave the person. */
  chat: string[]
  /** The console's views read through its HTTP API (`approvals.list` while asked, `log.list` and `audit.list` after), as JSON. */
  console: string[]
  rewrites: Rewrite[]
  decisions: DecisionEvent[]
  /** Every `tools/*` and `permissions/*` event, serialized. */
  events: string[]
  results: ToolResult[]
  /** The flood batch's results (calls nobody authorized). */
  floodResults: ToolResult[]
  /** What `execute` threw, if it did. */
  thrown: unknown[]
  audit: AuditRecord[]
  /** The pending store's file (pending.json) while each question waited, with `permissions.durable`. */
  stored: string[]
  logs: LogLine[]
  spans: ReadableSpan[]
  errors: unknown[]
}

export function emptyObservations(): Observations {
  return { questions: [], framework: [], asked: [], approver: [], tampered: [], chat: [], console: [], rewrites: [], decisions: [], events: [], results: [], floodResults: [], thrown: [], audit: [], stored: [], logs: [], spans: [], errors: [] }
}

/** JSON of anything a channel carries: functions dropped, schemas as their JSON, cycles cut. */
export function serialize(value: unknown): string {
  const seen = new WeakSet<object>()
  return JSON.stringify(value, (_key, item) => {
    if (typeof item === 'function') return undefined
    if (typeof item === 'bigint') return String(item)
    if (item && typeof item === 'object') {
      if (seen.has(item)) return '[cycle]'
      seen.add(item)
    }
    return item
  }) ?? ''
}

/** Each channel as named text, for I2: where a secret would have been seen. */
export function channelTexts(observations: Observations): [channel: string, text: string][] {
  const texts: [string, string][] = []
  observations.questions.forEach((text, i) => texts.push([`question #${i}`, text]))
  observations.framework.forEach((text, i) => texts.push([`toolset.decide() result #${i}`, text]))
  observations.chat.forEach((text, i) => texts.push([`chat message #${i}`, text]))
  observations.console.forEach((text, i) => texts.push([`console view #${i}`, text]))
  observations.events.forEach((text, i) => texts.push([`event #${i}`, text]))
  observations.results.forEach((result, i) => texts.push([`result #${i} (${result.name}, shown to the model)`, serialize(result)]))
  observations.audit.forEach((record, i) => texts.push([`audit record #${i}`, serialize(record)]))
  observations.stored.forEach((text, i) => texts.push([`pending store while question #${i} waited`, text]))
  observations.logs.forEach((line, i) => texts.push([`log line #${i}`, line.text]))
  observations.spans.forEach((span, i) => texts.push([`span #${i} ${span.name}`, serialize({ attributes: span.attributes, events: span.events, status: span.status })]))
  return texts
}
