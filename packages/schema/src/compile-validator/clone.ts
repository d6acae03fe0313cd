/** A port of cosmokit's `clone`, which schemastery applies to a default before resolving it. */
export function clone(source: any, refs = new Map<any, any>()): any {
  if (!source || typeof source !== 'object') return source
  if (source instanceof Date) return new Date(source.valueOf())
  if (source instanceof RegExp) return new RegExp(source.source, source.flags)
  if (source instanceof ArrayBuffer) return source.slice(0)
  if (ArrayBuffer.isView(source)) return source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength)
  const cached = refs.get(source)
  if (cached) return cached
  if (Array.isArray(source)) {
    const result: any[] = []
    refs.set(source, result)
    source.forEach((value, index) => { result[index] = clone(value, refs) })
    return result
  }
  const result = Object.create(Object.getPrototypeOf(source))
  refs.set(source, result)
  for (const key of Reflect.ownKeys(source)) {
    const descriptor = { ...Reflect.getOwnPropertyDescriptor(source, key) }
    if ('value' in descriptor) descriptor.value = clone(descriptor.value, refs)
    Reflect.defineProperty(result, key, descriptor)
  }
  return result
}
