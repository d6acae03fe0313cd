/**
 * The first `max` characters of a text for a chat message, cut at a code point (never
 * inside a surrogate pair); `cut` says whether anything was left out.
 */
export function clipText(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false }
  let end = Math.max(0, max)
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return { text: text.slice(0, end), cut: true }
}
