type Primitive = string | number | boolean | string[]

/**
 * The content an elicitation form is accepted with: every field's default. Undefined when
 * a required field has none, since Dogu's askers answer yes or no, never a field.
 */
export function formDefaults(schema: unknown): Record<string, Primitive> | undefined {
  if (!schema || typeof schema !== 'object') return undefined
  const { properties = {}, required = [] } = schema as { properties?: Record<string, { default?: Primitive }>; required?: string[] }
  const content: Record<string, Primitive> = {}
  for (const [key, field] of Object.entries(properties)) {
    if (field && typeof field === 'object' && field.default !== undefined) content[key] = field.default
  }
  return Array.isArray(required) && required.every((key) => Object.hasOwn(content, key)) ? content : undefined
}
