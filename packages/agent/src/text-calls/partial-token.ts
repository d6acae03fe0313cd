/** Whether the text from `at` to its end is the start of one of `tokens`: markup cut off inside a tag. */
export function endsInsideToken(text: string, at: number, tokens: readonly string[]): boolean {
  const rest = text.slice(at)
  return rest.length > 0 && tokens.some((token) => rest.length < token.length && token.startsWith(rest))
}
