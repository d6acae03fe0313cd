import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { casesOf } from '../../../test-support/log-guard-cases'

// The guard (test-support/log-guard.ts) on Cordis 4: its cases run in a child vitest, since
// some must fail; here each one's outcome is checked. A guard that let them pass would fail this.

const { outcome, count, fileErrors } = casesOf(resolve(import.meta.dirname, 'fixtures/log-guard.cases.ts'))

const UNREACHABLE = 'MCP server "odd": cannot connect: ECONNREFUSED'

describe('log guard on Cordis 4', () => {
  it('ran every case', () => {
    expect(count()).toBe(11)
  })

  it('fails a test during which an internal/warn appeared that it did not declare, naming the line', () => {
    const { state, errors, output } = outcome('emits an internal/warn it does not declare')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining(`- unexpected warn: [app] ${UNREACHABLE}`)])
    expect(output).toBe('')
  })

  it('passes a test that declared its warning, printing the line once, as one line', () => {
    expect(outcome('emits an internal/warn it declares')).toEqual({ state: 'passed', errors: [], output: `expected warn: [app] ${UNREACHABLE}\n` })
  })

  it('prints a declared plugin error without its stack trace, named by the fiber that reported it', () => {
    // Cordis 4 reports a failed plugin's error from its fiber, and from the root again when the app is disposed.
    expect(outcome('loads a plugin that throws, declaring its error')).toEqual({
      state: 'passed',
      errors: [],
      output: 'expected error: [broken] Error: boom\nexpected error: [app] Error: boom\n',
    })
  })

  it('fails the test whose app threw while being disposed: the guard outlives the root fiber', () => {
    const { state, errors } = outcome('loads a plugin whose effect throws when the app is disposed')
    expect(state).toBe('failed')
    expect(errors).toHaveLength(1)
    expect(errors[0].match(/- unexpected error: \[fragile\] Error: dispose broke/g)).toHaveLength(1)
  })

  it('still sees an internal/error after the app was disposed', () => {
    const { state, errors } = outcome('emits an internal/error after the app was disposed')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining('- unexpected error: [app] Error: too late')])
  })

  it('fails a test that emitted a warning under cordis 3\'s name, which a Cordis 4 owner would never see', () => {
    const { state, errors } = outcome('emits a warning as internal/warning, which Cordis 4 does not log')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining('- unexpected warn: [unlogged internal/warning] a warning in cordis 3 words')])
  })

  it('reads what an app prints: an entry with its stack is one line; a transcript counts its marked lines only', () => {
    expect(outcome('reads an error with its stack from a child\'s stderr, declaring it')).toEqual({ state: 'passed', errors: [], output: 'expected error: [child] Error: it broke\n' })
    const { state, errors } = outcome('prints a transcript whose marked line it does not declare')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringMatching(/\n- unexpected error: \[transcript\] the store could not be written$/)])
  })

  it('fails a test whose declared line never appeared, saying where it was declared; an optional one may stay absent', () => {
    const { state, errors } = outcome('declares a line that never appears')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringMatching(/- expected a line matching \/never logged\/ \(declared at .*log-guard\.cases\.ts:\d+:\d+\), but none appeared/)])
    expect(outcome('declares an optional line that never appears')).toEqual({ state: 'passed', errors: [], output: '' })
  })

  it('fails the next test for a line logged outside any test, and the file for one logged after the last', () => {
    const { state, errors } = outcome('runs after a beforeAll that logged a warning')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringMatching(/^outside any test .*\n- unexpected warn: \[app\] logged in beforeAll$/)])
    expect(fileErrors()).toEqual([expect.stringContaining('- unexpected warn: [app] logged in the last afterAll')])
  })
})
