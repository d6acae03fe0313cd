// The broken-tool-call corpus (README.md): loading its files, building its fixture tools
// for a registry, and judging one case's result. Plain JavaScript, so that the test specs
// (against the sources) and `yarn bench repair` (against the built lib) judge alike.
import { readdirSync, readFileSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { join } from 'node:path'

const here = import.meta.dirname

function readLines(file) {
  return readFileSync(file, 'utf8').split('\n').filter((line) => line.trim()).map((line, i) => {
    try {
      return JSON.parse(line)
    } catch (error) {
      throw new Error(`${file}:${i + 1}: ${error.message}`)
    }
  })
}

/** The fixture tools' specs (tools.json). */
export function toolSpecs() {
  return JSON.parse(readFileSync(join(here, 'tools.json'), 'utf8'))
}

/** Every argument case, each with its `family` (the file it is in), in file order. */
export function argumentCases() {
  const dir = join(here, 'arguments')
  return readdirSync(dir).filter((file) => file.endsWith('.jsonl')).sort().flatMap((file) => {
    const family = file.replace(/\.jsonl$/, '')
    return readLines(join(dir, file)).map((entry) => ({ ...entry, family }))
  })
}

/** Every text-written call case (text-tool-calls.jsonl). */
export function textCases() {
  return readLines(join(here, 'text-tool-calls.jsonl'))
}

const fieldSchema = {
  string: (Schema) => Schema.string(),
  number: (Schema) => Schema.number(),
  boolean: (Schema) => Schema.boolean(),
  'string[]': (Schema) => Schema.array(Schema.string()),
  object: (Schema) => Schema.dict(Schema.any()),
}

/**
 * The fixture tools as definitions, built with the caller's `defineTool` and `Schema` (the
 * sources in specs, the built lib in the bench). Each returns its arguments as `data` and
 * counts its runs in `runs`, so a refused case can show that its tool never ran.
 */
export function fixtureTools({ defineTool, Schema }, runs = new Map()) {
  return toolSpecs().map((spec) => {
    const fields = Object.fromEntries(Object.entries(spec.args).map(([key, field]) => {
      let schema = fieldSchema[field.type](Schema)
      if (field.required) schema = schema.required()
      return [key, schema.description(field.description)]
    }))
    return defineTool({
      name: spec.name,
      description: spec.description,
      args: Schema.object(fields),
      traits: { effect: 'read' },
      run: (args) => {
        runs.set(spec.name, (runs.get(spec.name) ?? 0) + 1)
        return { text: 'ok', data: args }
      },
    })
  })
}

/** The verdicts a case can get; the first three are right. */
export const VERDICTS = ['repaired', 'refused', 'unchanged', 'steps-differ', 'wrongly-repaired', 'wrongly-refused', 'other']

/**
 * Runs one argument case through `toolset.execute` and judges it. A case that expects args
 * is compared with a reference call: the same tool called with `JSON.stringify(args)`, so
 * defaults and the validator's handling of `null` apply to both sides alike.
 */
export async function judgeArgumentCase(toolset, entry, runs) {
  const before = runs.get(entry.tool) ?? 0
  const [result] = await toolset.execute([{ id: 'c1', name: entry.tool, arguments: entry.arguments }])
  const ran = (runs.get(entry.tool) ?? 0) > before
  const { expect } = entry
  const refusedNow = result.status === 'error' && result.code === 'invalid_arguments' && !ran
  const judged = (verdict, detail) => ({ verdict, detail, result })
  if (expect.refused) {
    if (refusedNow) return judged('refused')
    if (ran || result.status === 'ok') return judged('wrongly-repaired', `ran with ${JSON.stringify(result.data)}`)
    return judged('other', `${result.status} ${result.code ?? ''}: ${result.content}`)
  }
  const [reference] = await toolset.execute([{ id: 'ref', name: entry.tool, arguments: JSON.stringify(expect.args) }])
  runs.set(entry.tool, (runs.get(entry.tool) ?? 0) - (reference.status === 'ok' ? 1 : 0))
  if (reference.status !== 'ok') return judged('other', `the case's own args are refused: ${reference.content}`)
  if (refusedNow) return judged('wrongly-refused', result.content)
  if (result.status !== 'ok') return judged(ran ? 'wrongly-repaired' : 'other', `${result.status} ${result.code ?? ''}: ${result.content}`)
  if (!isDeepStrictEqual(result.data, reference.data)) return judged('wrongly-repaired', `ran with ${JSON.stringify(result.data)}, meant ${JSON.stringify(reference.data)}`)
  if (expect.unchanged) return result.repaired ? judged('wrongly-repaired', `marked repaired: ${JSON.stringify(result.repaired.steps)}`) : judged('unchanged')
  if (!result.repaired) return judged('other', 'ran with the meant args but without `repaired`')
  const got = [...new Set(result.repaired.steps)].sort()
  const want = [...new Set(expect.steps)].sort()
  if (!isDeepStrictEqual(got, want)) return judged('steps-differ', `steps ${JSON.stringify(result.repaired.steps)}, expected ${JSON.stringify(expect.steps)}`)
  return judged('repaired')
}

/** Counts verdicts, overall and per family: `{ total: {verdict: n}, families: {family: {verdict: n}} }`. */
export function tally(judgements) {
  const empty = () => Object.fromEntries(VERDICTS.map((verdict) => [verdict, 0]))
  const total = empty()
  const families = {}
  for (const { entry, verdict } of judgements) {
    total[verdict]++
    ;(families[entry.family] ??= empty())[verdict]++
  }
  return { total, families }
}

/** The one-line summary the spec and the bench print. */
export function summaryLine({ total }) {
  const cases = Object.values(total).reduce((sum, count) => sum + count, 0)
  return `repair corpus: ${cases} cases: ${total.repaired} repaired correctly, ${total.refused} refused correctly, ` +
    `${total.unchanged} passed through unchanged, ${total['wrongly-repaired']} wrongly repaired, ` +
    `${total['wrongly-refused']} wrongly refused, ${total['steps-differ']} with other steps, ${total.other} other`
}

/** Whitespace runs as one space, trimmed: how a text case compares the text left after extraction. */
export function normalizeText(text) {
  return text.replace(/\s+/g, ' ').trim()
}
