import type Schema from 'schemastery'

/** Builds a lazy schema's inner schema, exactly as schemastery does on first use. */
export function lazyInner(schema: Schema): Schema {
  if (!(schema.inner as any)?.[Symbol.for('schemastery')]) {
    schema.inner = schema.builder!()
    schema.inner!.meta = { ...schema.meta, ...schema.inner!.meta }
  }
  return schema.inner!
}
