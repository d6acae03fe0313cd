export interface BodyRead {
  bytes: Uint8Array
  /** The body was longer than the cap; reading stopped there and the stream was cancelled. */
  truncated: boolean
}

/**
 * Reads a response body up to `maxBytes`, then cancels the stream so the rest is never
 * downloaded.
 */
export async function readBody(response: Response, maxBytes: number): Promise<BodyRead> {
  if (!response.body) return { bytes: new Uint8Array(0), truncated: false }
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  let truncated = false
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (done) break
      if (length + value.length > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - length))
        length = maxBytes
        truncated = true
        break
      }
      chunks.push(value)
      length += value.length
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  return { bytes: Buffer.concat(chunks, length), truncated }
}
