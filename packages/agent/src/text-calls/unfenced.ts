/** The text inside a Markdown fence, or the text as it is (trimmed) when there is none. */
export function unfenced(text: string): string {
  const match = /^\s*(`{3,}|~{3,})[\w-]*[ \t]*\n([\s\S]*?)\n?[ \t]*\1\s*$/.exec(text)
  return (match ? match[2] : text).trim()
}
