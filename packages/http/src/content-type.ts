/** What a response says it is: a lowercase MIME type and its charset, if any. */
export interface ContentType {
  mime: string
  charset?: string
}

export function parseContentType(header: string | null): ContentType | undefined {
  if (!header) return undefined
  const [mime, ...params] = header.split(';')
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(param)?.[1]).find(Boolean)
  return { mime: mime.trim().toLowerCase(), charset }
}

/** Matches a MIME type against patterns such as `text/*` and `application/*+json`. */
export function matchesContentType(mime: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => {
    const [type, sub] = pattern.toLowerCase().split('/')
    const [mimeType, mimeSub = ''] = mime.split('/')
    if (type !== '*' && type !== mimeType) return false
    if (sub === '*' || sub === mimeSub) return true
    // `*+json` matches `ld+json`, `problem+json`, …
    return sub.startsWith('*+') && mimeSub.endsWith(sub.slice(1))
  })
}

export const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml'])

/** Decodes with the declared charset when the runtime knows it, UTF-8 otherwise. */
export function decodeText(bytes: Uint8Array, charset?: string): string {
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(charset || 'utf-8')
  } catch {
    decoder = new TextDecoder()
  }
  return decoder.decode(bytes)
}
