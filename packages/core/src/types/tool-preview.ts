/**
 * What a call would do, shown to the person asked to approve it (`defineTool({ preview })`).
 * Every field is optional; askers show those present, each bounded on screen with a way to
 * see the rest (`d` / `详情` in chat, an expander in the consoles).
 */
export interface ToolPreview {
  /** What will happen, in words; may span lines (`in /work/app, sandboxed, no network`). */
  text?: string
  /** The unified diff the call would apply (`--- a/x`, `+++ b/x`, `@@ … @@` hunks). */
  diff?: string
  /** The URL as it will be fetched, after normalization. */
  url?: string
  /** The whole command line that will run, never shortened. */
  command?: string
}
