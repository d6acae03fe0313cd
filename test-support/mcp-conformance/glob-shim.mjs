// `node --import` entry for the conformance suite alone: the suite imports `globSync` from
// `fs`, which Node 20 lacks. Its imports of `fs` resolve to fs-with-glob.mjs; nothing else
// (the project, its Node) is touched.
import { register } from 'node:module'

register('./glob-shim-hooks.mjs', import.meta.url)
