import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { normalizeText, textCases, toolSpecs } from '../../../test-support/broken-tool-calls/corpus.mjs'
import { extractTextToolCalls } from '../src'

// The text-written calls of the broken-tool-call corpus (test-support/broken-tool-calls/README.md).
const cases = textCases()

describe('the text cases themselves', () => {
  const readme = readFileSync(new URL('../../../test-support/broken-tool-calls/README.md', import.meta.url), 'utf8')
  const tools = new Set(toolSpecs().map((spec) => spec.name))

  it('has at least 60 cases, with unique ids, from cited sources', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
    expect(new Set(cases.map((entry) => entry.id)).size).toBe(cases.length)
    for (const entry of cases) {
      expect(readme).toContain(entry.source)
      for (const call of entry.expect.calls) expect(tools.has(call.name)).toBe(true)
    }
  })
})

describe('extractTextToolCalls over the corpus', () => {
  it.each(cases)('$id ($format)', (entry) => {
    const extracted = extractTextToolCalls(entry.text, entry.format)
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
      const { calls } = extractTextToolCalls(entry.text, entry.format)
      return calls.length !== entry.expect.calls.length
    })
    const extractedFromNothing = wrong.filter((entry) => !entry.expect.calls.length).map((entry) => entry.id)
    const missed = wrong.filter((entry) => entry.expect.calls.length).map((entry) => entry.id)
    console.log(`text tool calls corpus: ${cases.length} cases, ${cases.length - wrong.length} with the right number of calls, ${missed.length} missed, ${extractedFromNothing.length} extracted from text that holds none`)
    // Extracting a call the model never made would run a tool on a guess.
    expect(extractedFromNothing).toEqual([])
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
