import type { ShownValue } from './validation'

/** What a secret value is shown as (`@dogu/core`'s `SECRET_MASK`). */
const SECRET_MASK = '••••'

/** A value as a problem quotes it: its type, and for a scalar its text (a string cut at 60 characters). */
export function shown(data: unknown): ShownValue {
  if (typeof data === 'string') return { type: 'string', text: JSON.stringify(data.length > 60 ? data.slice(0, 57) + '...' : data) }
  if (typeof data === 'number' || typeof data === 'boolean' || typeof data === 'bigint') return { type: typeof data as 'number', text: String(data) }
  if (data === null) return { type: 'null' }
  if (data === undefined) return { type: 'undefined' }
  if (Array.isArray(data)) return { type: 'array', items: data.length }
  if (typeof data === 'function') return { type: 'function' }
  return { type: data instanceof Date ? 'date' : 'object' }
}

/** A shown value in English, bare: `"dev"`, `3`, `an array of 2 items`. */
export function previewShown(value: ShownValue): string {
  switch (value.type) {
    case 'string': case 'number': case 'boolean': case 'bigint': return value.text
    case 'array': return `an array of ${value.items} items`
    case 'null': case 'undefined': return value.type
    case 'function': return 'a function'
    case 'date': return 'a Date'
    case 'object': return 'an object'
    case 'secret': return SECRET_MASK
  }
}

/** A shown value in English with its type: `string "dev"`, `number 3`. */
export function describeShown(value: ShownValue): string {
  return value.type === 'string' || value.type === 'number' || value.type === 'boolean' ? `${value.type} ${value.text}` : previewShown(value)
}

export function preview(data: unknown): string {
  return previewShown(shown(data))
}

export function describe(data: unknown): string {
  return describeShown(shown(data))
}
