import Schema from 'schemastery'
import { afterEach, expect, it, vi } from 'vitest'
import { compileValidator } from '../src'

afterEach(() => {
  vi.restoreAllMocks()
})

// A page whose Content-Security-Policy forbids `new Function` (the debug console) compiles
// with `codegen: false`: the same verdicts, and no attempt the browser would report.
it('codegen: false never generates code and gives the same verdicts, every path reported', () => {
  const schema = Schema.object({
    text: Schema.string().required(),
    times: Schema.natural().max(5).default(1),
    nested: Schema.object({ on: Schema.boolean().required() }),
  })
  const withCode = compileValidator(schema)
  const generate = vi.spyOn(globalThis, 'Function')
  const withoutCode = compileValidator(schema, { codegen: false })
  for (const input of [{ text: 'hi' }, { times: 9, nested: {} }, { text: 'x', times: 2, nested: { on: true } }, 'not an object']) {
    expect(withoutCode(input)).toEqual(withCode(input))
  }
  expect(withoutCode({ times: 9, nested: {} })).toMatchObject({ ok: false, issues: [{ path: '$.text' }, { path: '$.times' }, { path: '$.nested.on' }] })
  expect(generate).not.toHaveBeenCalled()
})
