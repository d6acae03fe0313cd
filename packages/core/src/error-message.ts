/** The text of a thrown value, for a result or a log line: its message, else its name. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
