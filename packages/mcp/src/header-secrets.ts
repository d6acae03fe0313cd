/**
 * The secrets in configured headers: every value, and of `Authorization` (`Bearer xyz`,
 * `Basic …`) also the credentials after the scheme, which a tool may show without it.
 */
export function headerSecrets(headers: Record<string, string> | undefined): string[] {
  const secrets: string[] = []
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== 'string') continue
    secrets.push(value)
    const credentials = /^(?:proxy-)?authorization$/i.test(name) && /^[!#$%&'*+.^`|~\w-]+ +(\S.*)$/.exec(value.trim())
    if (credentials) secrets.push(credentials[1]!)
  }
  return secrets
}
