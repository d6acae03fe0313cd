/** `$.a` for identifier keys, `$["a b"]` otherwise: the paths SchemaError names. */
export function childPath(path: string, key: string) {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}
