import { readFileSync } from 'node:fs'
import { defineTool, ToolRegistry } from '@dogu/core'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { fixtureTools, normalizeText, textCases, toolSpecs } from '../../../test-support/broken-tool-calls/corpus.mjs'
import { extractTextToolCalls, type TextToolCallFormat } from '../src'

// The text-written calls of the broken-tool-call corpus (test-support/broken-tool-calls/README.md).
const cases = textCases()
// The fixture tools as a turn sends them (OpenAI's definitions): bare JSON names one, XML values take their types.
const registry = new ToolRegistry()
for (const tool of fixtureTools({ defineTool, Schema })) registry.define(tool)
const tools = registry.toolset({ session: { id: 'corpus' } }).definitions('openai').map((definition) => definition.function)
const extract = (text: string, format: TextToolCallFormat) => extractTextToolCalls(text, format, { tools })

describe('the text cases themselves', () => {
  const readme = readFileSync(new URL('../../../test-support/broken-tool-calls/README.md', import.meta.url), 'utf8')
  const tools = new Set(toolSpecs().map((spec) => spec.name))

  it('has at least 130 cases, with unique ids, from cited sources, and every format under its own name', () => {
    expect(cases.length).toBeGreaterThanOrEqual(130)
    expect(new Set(cases.map((entry) => entry.format))).toEqual(new Set(['auto', 'hermes', 'qwen', 'deepseek', 'mistral', 'qwen3-coder', 'glm', 'kimi', 'llama']))
    expect(new Set(cases.map((entry) => entry.id)).size).toBe(cases.length)
    for (const entry of cases) {
      expect(readme).toContain(entry.source)
      for (const call of entry.expect.calls) expect(tools.has(call.name)).toBe(true)
    }
  })
})

describe('extractTextToolCalls over the corpus', () => {
  it.each(cases)('$id ($format)', (entry) => {
    const extracted = extract(entry.text, entry.format)
    // A call the text ends inside is reported in its format, and never extracted.
    expect(extracted.cutOff?.format).toBe(entry.expect.cutOff)
    expect(extracted.calls.map((call) => ({ name: call.name, args: parsedArguments(call.arguments) }))).toEqual(entry.expect.calls)
    const ids = extracted.calls.map((call) => call.id)
    for (const id of ids) expect(id).toMatch(/\S/)
    expect(new Set(ids).size).toBe(ids.length)
    if (entry.expect.calls.length) {
      expect(normalizeText(extracted.text)).toBe(normalizeText(entry.expect.text))
    } else {
      // Nothing to extract: the text comes back as it was, to the character.
      expect(extracted.text).toBe(entry.text)
    }
  })

  it('extracts every case that holds calls and none of the others', () => {
    const wrong = cases.filter((entry) => {
      const { calls } = extract(entry.text, entry.format)
      return calls.length !== entry.expect.calls.length
    })
    const extractedFromNothing = wrong.filter((entry) => !entry.expect.calls.length).map((entry) => entry.id)
    const missed = wrong.filter((entry) => entry.expect.calls.length).map((entry) => entry.id)
    // A run other than the one meant: a call where the case holds none, or one with another name or arguments.
    const wrongRuns = cases.filter((entry) => {
      const { calls } = extract(entry.text, entry.format)
      return calls.some((call, i) => !entry.expect.calls[i] || call.name !== entry.expect.calls[i].name || JSON.stringify(parsedArguments(call.arguments)) !== JSON.stringify(entry.expect.calls[i].args))
    }).map((entry) => entry.id)
    console.log(`text tool calls corpus: ${cases.length} cases, ${cases.length - wrong.length} with the right number of calls, ${missed.length} missed, ${extractedFromNothing.length} extracted from text that holds none, ${wrongRuns.length} wrong runs`)
    // Extracting a call the model never made, or other arguments than it wrote, would run a tool on a guess.
    expect(extractedFromNothing).toEqual([])
    expect(wrongRuns).toEqual([])
  })
})

/**
 * The arguments text as a value; a JSON string holding the object (double-encoded) is read
 * once more. Text that does not parse stays text, so the comparison shows it.
 */
function parsedArguments(text: string): unknown {
  try {
    const value = text === '' ? {} : JSON.parse(text)
    return typeof value === 'string' ? JSON.parse(value) : value
  } catch {
    return text
  }
}
