/**
 * Streamed text, shown as it comes until a tool-call marker may begin: from there it is held,
 * so markup the loop then takes out as calls never reaches the screen. At the end of the
 * turn `finish(shown)` releases what remains of the text as the turn shows it.
 */
export class HeldText {
  private text = ''
  private released = 0
  private holding = false

  /**
   * `leading`: markers that count only at the start of the text, after whitespace (a bare
   * JSON call is one only as a whole message, so a reply that starts with `{` is held).
   */
  constructor(private markers: readonly string[], private emit: (delta: string) => void, private leading: readonly string[] = []) {}

  push(delta: string) {
    this.text += delta
    if (this.holding) return
    if (this.leading.length && this.released === 0) {
      const head = this.text.trimStart()
      if (this.leading.some((marker) => head.startsWith(marker))) {
        this.holding = true
        return
      }
      // Only whitespace so far, or the start of a leading marker: wait for more.
      if (!head || this.leading.some((marker) => marker.startsWith(head))) return
    }
    const at = this.firstMarker()
    if (at !== undefined) this.holding = true
    // Up to the marker, or up to a tail that could still become one (`<tool` of `<tool_call>`);
    // trailing whitespace waits too, since the text is trimmed where markup is cut out.
    const until = at ?? this.text.length - this.partialTail()
    this.release(until - trailingSpace(this.text.slice(this.released, until)))
  }

  /** Releases the rest of `shown` (the turn's text with any calls' markup removed). */
  finish(shown: string) {
    const sent = this.text.slice(0, this.released)
    // What went out is a prefix of the shown text, but for whitespace that the cut trimmed.
    const start = shown.startsWith(sent) ? sent.length : shown.startsWith(sent.trimStart()) ? sent.trimStart().length : shown.length
    if (start < shown.length) this.emit(shown.slice(start))
  }

  private release(until: number) {
    if (until <= this.released) return
    this.emit(this.text.slice(this.released, until))
    this.released = until
  }

  private firstMarker(): number | undefined {
    let first: number | undefined
    for (const marker of this.markers) {
      const at = this.text.indexOf(marker, Math.max(0, this.released - marker.length))
      if (at >= 0 && (first === undefined || at < first)) first = at
    }
    return first
  }

  /** How many characters at the end could be the start of a marker. */
  private partialTail(): number {
    let longest = 0
    for (const marker of this.markers) {
      for (let length = Math.min(marker.length - 1, this.text.length); length > longest; length--) {
        if (marker.startsWith(this.text.slice(-length))) {
          longest = length
          break
        }
      }
    }
    return longest
  }
}

function trailingSpace(text: string): number {
  return text.length - text.trimEnd().length
}
