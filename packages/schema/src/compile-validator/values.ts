export function preview(data: unknown): string {
  if (typeof data === 'string') return JSON.stringify(data.length > 60 ? data.slice(0, 57) + '...' : data)
  if (typeof data === 'number' || typeof data === 'boolean' || typeof data === 'bigint') return String(data)
  if (data === null || data === undefined) return String(data)
  if (Array.isArray(data)) return `an array of ${data.length} items`
  if (typeof data === 'function') return 'a function'
  return data instanceof Date ? 'a Date' : 'an object'
}

export function describe(data: unknown): string {
  const type = typeof data
  return type === 'string' || type === 'number' || type === 'boolean' ? `${type} ${preview(data)}` : preview(data)
}
