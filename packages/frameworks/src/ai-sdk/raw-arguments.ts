import { RecentMap } from '../common/recent-map'

/** Texts kept per adapter: enough for the calls of the steps in flight. */
const MAX_KEPT = 1000

/**
 * The model's own argument text for calls the AI SDK could not parse, kept by
 * `repairToolCall` until the call's `execute` takes it: Dogu repairs (and records the
 * repair) or refuses that text itself, rather than the SDK's parse of it. One per
 * `aiSdkTools()`; the oldest text is dropped past `MAX_KEPT` (its call then runs on the
 * repaired arguments the history shows).
 */
export class RawArguments {
  private texts = new RecentMap<string, { text: string; input: string }>(MAX_KEPT)

  /** `input`: the JSON text `repairToolCall` gave the SDK instead, which its tool input is parsed from. */
  keep(toolCallId: string, text: string, input: string): void {
    this.texts.set(toolCallId, { text, input: canonical(JSON.parse(input)) })
  }

  /**
   * The text kept for this call, if `input` is what it was repaired into: a model that
   * reuses call ids (some do, per turn) in another conversation of the same tools never
   * gets another call's text. `take` forgets it; `needsApproval` only peeks.
   */
  peek(toolCallId: string, input: unknown): string | undefined {
    const kept = this.texts.get(toolCallId)
    return kept && kept.input === canonical(input) ? kept.text : undefined
  }

  take(toolCallId: string, input: unknown): string | undefined {
    const text = this.peek(toolCallId, input)
    if (text !== undefined) this.texts.delete(toolCallId)
    return text
  }
}

function canonical(value: unknown): string {
  return JSON.stringify(value) ?? ''
}
