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
  private texts = new Map<string, string>()

  keep(toolCallId: string, text: string): void {
    this.texts.delete(toolCallId)
    if (this.texts.size >= MAX_KEPT) this.texts.delete(this.texts.keys().next().value!)
    this.texts.set(toolCallId, text)
  }

  /** The text kept for the call, still kept: `needsApproval` decides on it, `execute` runs it. */
  peek(toolCallId: string): string | undefined {
    return this.texts.get(toolCallId)
  }

  take(toolCallId: string): string | undefined {
    const text = this.texts.get(toolCallId)
    this.texts.delete(toolCallId)
    return text
  }
}

/** The raw texts of the adapter that made each tool object: how `repairToolCall` finds them from the SDK's `tools`. */
export const RAW_ARGUMENTS = new WeakMap<object, RawArguments>()
