// Module resolution hook: `fs` imported by the conformance suite's bundle becomes fs-with-glob.mjs.
const FS_WITH_GLOB = new URL('./fs-with-glob.mjs', import.meta.url).href

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes('/@modelcontextprotocol/conformance/dist/')
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) return { url: FS_WITH_GLOB, shortCircuit: true }
  return next(specifier, context)
}
