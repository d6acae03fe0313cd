import { readFileSync } from 'node:fs'
import Schema from 'schemastery'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  argumentCases,
  fixtureTools,
  judgeArgumentCase,
  type Judgement,
  summaryLine,
  tally,
  toolSpecs,
} from '../../../test-support/broken-tool-calls/corpus.mjs'
import { defineTool, REPAIR_STEPS, ToolRegistry, type ToolResult } from '../src'

// The broken-tool-call corpus (test-support/broken-tool-calls/README.md), each case through a
// real registry's `toolset.execute`, as a model's call arrives.
const cases = argumentCases()
const session = { id: 'corpus', userId: 'u1' }

function toolsetOf(options: ConstructorParameters<typeof ToolRegistry>[0] = {}) {
  const runs = new Map<string, number>()
  const registry = new ToolRegistry(options)
  for (const tool of fixtureTools({ defineTool, Schema }, runs)) registry.define(tool)
  return { toolset: registry.toolset({ session }), runs }
}

describe('the corpus itself', () => {
  const tools = new Set(toolSpecs().map((spec) => spec.name))
  const readme = readFileSync(new URL('../../../test-support/broken-tool-calls/README.md', import.meta.url), 'utf8')

  it('has at least 300 cases, 40 of them valid-but-unusual, with unique ids', () => {
    expect(cases.length).toBeGreaterThanOrEqual(300)
    expect(cases.filter((entry) => 'unchanged' in entry.expect).length).toBeGreaterThanOrEqual(40)
    expect(new Set(cases.map((entry) => entry.id)).size).toBe(cases.length)
  })

  it.each(cases)('$id is well-formed', (entry) => {
    expect(tools.has(entry.tool)).toBe(true)
    if (entry.source !== 'unusual-valid') expect(readme).toContain(entry.source)
    const { expect: expected } = entry
    if ('refused' in expected) {
      expect(expected.why).toBeTruthy()
    } else if ('unchanged' in expected) {
      // Valid JSON (or the empty text a tool without arguments accepts), meaning exactly args.
      expect(entry.arguments === '' ? {} : JSON.parse(entry.arguments)).toStrictEqual(expected.args)
    } else {
      // Broken for real: JSON.parse fails, or finds a string (double-encoded).
      let parsed: unknown
      try {
        parsed = JSON.parse(entry.arguments)
      } catch {
        parsed = undefined
      }
      if (parsed !== undefined) expect(typeof parsed).toBe('string')
      // A repair names its steps; only a raw control character inside a string is escaped
      // without one (the value does not change), and such a case says so in its note.
      if (!expected.steps.length) expect((entry as { note?: string }).note).toMatch(/raw .* inside a string/)
      for (const step of expected.steps) expect(REPAIR_STEPS).toContain(step)
    }
  })
})

describe('repair over the corpus', () => {
  const judged = new Map<string, Judgement<ToolResult>>()

  beforeAll(async () => {
    const { toolset, runs } = toolsetOf()
    for (const entry of cases) judged.set(entry.id, await judgeArgumentCase(toolset, entry, runs))
    const counts = tally(cases.map((entry) => ({ entry, verdict: judged.get(entry.id)!.verdict })))
    console.log(summaryLine(counts))
  })

  it('never runs a tool on a wrong repair', () => {
    const wrong = cases.filter((entry) => judged.get(entry.id)!.verdict === 'wrongly-repaired')
    expect(wrong.map((entry) => `${entry.id}: ${judged.get(entry.id)!.detail}`)).toEqual([])
  })

  it.each(cases)('$id', (entry) => {
    const { verdict, detail, result } = judged.get(entry.id)!
    const want = 'refused' in entry.expect ? 'refused' : 'unchanged' in entry.expect ? 'unchanged' : 'repaired'
    expect({ verdict, detail }).toEqual({ verdict: want, detail: undefined })
    if (want === 'repaired') expect(result.repaired!.from).toBe(entry.arguments.slice(0, 2000))
    // A refusal is today's error, naming where the text stopped making sense.
    if (want === 'refused') expect(result.content).not.toBe('')
  })

  // Issue 45's families are refused for their own ambiguity, not for another fault a case
  // happens to have: a duplicate names its key and path, a cut its position.
  const REASONS: Record<string, RegExp> = {
    'duplicate-keys': /duplicate key "(?:[^"\\]|\\.)+" at \$|the key "(?:[^"\\]|\\.)+" is written twice at \$/,
    'cut-inside': /at position \d+ is cut off: the text ends inside it|the text ends at position \d+ after ","/,
  }
  it.each(cases.filter((entry) => REASONS[entry.family] && 'refused' in entry.expect))('$id is refused for its ambiguity', (entry) => {
    expect(judged.get(entry.id)!.result.content).toMatch(REASONS[entry.family])
  })
})

describe('repair: false', () => {
  it('refuses every case that needs a repair and still runs the valid ones', async () => {
    const { toolset, runs } = toolsetOf({ repair: false })
    const problems: string[] = []
    for (const entry of cases) {
      const before = runs.get(entry.tool) ?? 0
      const [result] = await toolset.execute([{ id: 'c1', name: entry.tool, arguments: entry.arguments }])
      const ran = (runs.get(entry.tool) ?? 0) > before
      const ok = 'unchanged' in entry.expect
        ? result.status === 'ok' && !result.repaired
        : result.code === 'invalid_arguments' && !ran
      if (!ok) problems.push(`${entry.id}: ${result.status} ${result.code ?? ''}`)
    }
    expect(problems).toEqual([])
  })
})
