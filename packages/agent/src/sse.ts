/**
 * The `data` of each server-sent event in `body`, in order. Bytes are decoded as one UTF-8
 * stream, so a character split between two network chunks survives; `\r\n` and `\n` line
 * ends both work; comments (`: keep-alive`) and other fields are skipped.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  const reader = body.getReader()
  let buffer = ''
  let data: string[] = []
  let ended = false
  try {
    while (true) {
      const { done, value } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.search(/\r\n|\n|\r/)) >= 0) {
        // A lone `\r` at the end may be the first half of `\r\n`: wait for the next chunk.
        if (!done && end === buffer.length - 1 && buffer[end] === '\r') break
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1))
        if (!line) {
          if (data.length) yield data.join('\n')
          data = []
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
        }
      }
      if (done) {
        ended = true
        break
      }
    }
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5))
    if (data.length) yield data.join('\n')
  } finally {
    reader.releaseLock()
    // Stops the download when the reader leaves early (abort, an error, `[DONE]`).
    if (!ended) await body.cancel().catch(() => {})
  }
}
