/**
 * Thrown by a tool whose upstream refused for now (an API's 429, a remote Dogu's quota):
 * the call ends `rate_limited`, with `retryAfterMs` when the tool knows it, like a call a
 * quota refused. Unlike a quota's refusal, the call ran, so it spent its quota units.
 *
 * @example
 * if (response.status === 429) throw new ToolRateLimit('the weather API allows 60 calls a minute', 30_000)
 */
export class ToolRateLimit extends Error {
  override name = 'ToolRateLimit'

  constructor(
    /** What the model reads, after `Rate limited: ` (added when missing). */
    public reason: string,
    /** Milliseconds until a retry may succeed, when known. */
    public retryAfterMs?: number,
  ) {
    super(reason)
  }
}
