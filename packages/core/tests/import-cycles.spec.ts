// Core's module structure, as issue 44 left it: the call's shared types sit on a floor
// (src/types/) that imports nothing above it, and no import cycle is left but the ones
// below (none today), each kept for a reason it names. A new cycle fails here.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { importCycles, importGraph } from './import-graph'

const graph = importGraph(fileURLToPath(new URL('../src', import.meta.url)))

/** The cycles that remain, each with why; an entry that no longer occurs may be removed. */
const REMAINING: readonly { files: readonly string[]; why: string }[] = []

/** The files of the circle issue 44 broke, and the floor that replaced it. */
const CIRCLE = [
  'tool.ts',
  'tool-call.ts',
  'permission-gate.ts',
  'permissions/asker.ts',
  'permissions/permission-decision.ts',
  'permissions/permission-modes.ts',
  'permissions/permission-rule.ts',
  'tool-preview.ts',
  'elicitation/elicitation.ts',
]

describe("core's import graph", () => {
  it('reads the files it checks', () => {
    for (const file of [...CIRCLE, 'types/effect.ts', 'types/decision.ts', 'types/approver.ts', 'types/tool-preview.ts']) {
      expect(graph.has(file), file).toBe(true)
    }
    expect(graph.get('tool.ts')).toContain('types/effect.ts')
  })

  it('keeps the type floor free of imports from above it', () => {
    const escapes = [...graph]
      .filter(([file]) => file.startsWith('types/'))
      .flatMap(([file, imports]) => [...imports].filter((target) => !target.startsWith('types/')).map((target) => `${file} -> ${target}`))
    expect(escapes).toEqual([])
  })

  it('has no cycle through the tool, call, gate, permission, preview or elicitation types', () => {
    const cycles = importCycles(graph).filter((cycle) => cycle.some((file) => CIRCLE.includes(file) || file.startsWith('types/')))
    expect(cycles).toEqual([])
  })

  it('has no import cycle but the ones named, each for its reason', () => {
    const unexpected = importCycles(graph).filter((cycle) => !REMAINING.some(({ files }) => files.join() === cycle.join()))
    expect(unexpected).toEqual([])
  })
})
