import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Draft } from '../src/audit/audit-draft'
import { RecordFinisher } from '../src/audit/record-finisher'
import { finishedLine, lineOf } from '../src/audit/record-json'

// A file store writes a call's record field by field (`finishedLine`); a reader parses it
// with JSON.parse. The line must be the record's JSON to the byte, whatever the model and the
// host put in it: quotes, newlines, U+2028, lone surrogates, long strings, NaN durations.
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('c1', 'weather', 'a "b"', 'x\ny', '\u2028', '\ud800', 'x'.repeat(80)))
const number = fc.oneof(fc.integer(), fc.double(), fc.constant(Number.NaN))
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined })

const draft = fc.record({
  at: fc.integer({ min: 0 }),
  elapsed: fc.nat(),
  tool: text,
  callId: text,
  args: optional(fc.jsonValue()),
  session: optional(fc.record({ id: text, userId: optional(text), platform: optional(text), authority: optional(fc.nat(5)) })),
  outcome: fc.oneof(fc.constantFrom('ok', 'error', 'denied', 'cancelled', 'timed_out', 'background', 'rate_limited'), text),
  durationMs: number,
  code: optional(text),
  reason: optional(text),
  taskId: optional(text),
  waitMs: optional(number),
  early: fc.boolean(),
  count: fc.integer({ min: 1, max: 3 }),
  decided: optional(fc.constantFrom({ kind: 'mode', mode: 'plan' }, { kind: 'default', effect: 'read' }, { kind: 'middleware', name: 'policy "x"' })),
  repaired: optional(fc.record({ steps: fc.array(fc.constantFrom('json', 'quotes', 'coerce')) })),
  ask: optional(fc.record({
    requestId: optional(text),
    ended: fc.constantFrom('answer', 'timeout', 'stopped', 'elsewhere'),
    decision: fc.constantFrom('allow', 'deny'),
    by: optional(fc.record({ id: text, platform: optional(text) })),
    via: optional(text),
    edited: optional(fc.constant(true)),
  }, { requiredKeys: ['ended', 'decision'] })),
  // The record of an answer given after a restart: the ask it answers.
  resumes: optional(fc.record({ callId: text, requestId: text, askedAt: optional(number) }, { requiredKeys: ['callId', 'requestId'] })),
})

function draftOf(fields: typeof draft extends fc.Arbitrary<infer T> ? T : never): Draft {
  const made = new Draft().fill(fields.at, fields.elapsed, fields.tool, fields.callId, fields.args, fields.session as never, fields.outcome as never, fields.durationMs)
  made.code = fields.code as never
  made.reason = fields.reason
  made.taskId = fields.taskId
  made.waitMs = fields.waitMs
  made.early = fields.early
  made.count = fields.count
  made.decided = fields.decided as never
  made.repaired = fields.repaired as never
  made.ask = fields.ask as never
  made.resumes = fields.resumes
  return made
}

describe('the file store writes a finished record as exactly its JSON', () => {
  it('for any call record the finisher makes, with arguments kept or too long and hashed', async () => {
    await fc.assert(fc.asyncProperty(draft, fc.constantFrom(16_384, 8), async (fields, maxArgumentsLength) => {
      const made = draftOf(fields)
      const record = await new RecordFinisher(false, new Set(), maxArgumentsLength).finish(made)
      expect(finishedLine(record, made.argsJson)).toBe(JSON.stringify(record))
      expect(lineOf(record, made.argsJson)).toBe(JSON.stringify(record))
      expect(JSON.parse(finishedLine(record, made.argsJson))).toEqual(JSON.parse(JSON.stringify(record)))
    }), { numRuns: 400 })
  })

  it('arguments that are not JSON are named in the record, not thrown', async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const made = new Draft().fill(1, 0, 'weather', 'c1', cyclic, undefined, 'ok', 0)
    const record = await new RecordFinisher(false, new Set(), 16_384).finish(made)
    expect(JSON.parse(finishedLine(record, made.argsJson)).args).toMatch(/^\[arguments not JSON: /)
  })
})
