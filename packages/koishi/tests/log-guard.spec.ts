import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { casesOf } from '../../../test-support/log-guard-cases'

// The guard (test-support/log-guard.ts) on Koishi 4: its cases run in a child vitest, since
// some must fail; here each one's outcome is checked. A guard that let them pass would fail this.

const { outcome, count, fileErrors } = casesOf(resolve(import.meta.dirname, 'fixtures/log-guard.cases.ts'))

const GRANTS = 'could not save permission grants: EACCES: permission denied'

describe('log guard on Koishi 4', () => {
  it('ran every case', () => {
    expect(count()).toBe(9)
  })

  it('fails a test during which a warning appeared that it did not declare, naming the line', () => {
    const { state, errors, output } = outcome('logs a warning it does not declare')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining(`- unexpected warn: [dogu] ${GRANTS}`)])
    expect(output).toBe('')
  })

  it('passes a test that declared its warning, printing the line once, as one line', () => {
    expect(outcome('logs a warning it declares')).toEqual({ state: 'passed', errors: [], output: `expected warn: [dogu] ${GRANTS}\n` })
  })

  it('prints a declared internal/error without its stack trace', () => {
    expect(outcome('emits an internal/error it declares')).toEqual({ state: 'passed', errors: [], output: 'expected error: [app] Error: boom\n' })
  })

  it('fails the test whose app threw while stopping, reporting the error once', () => {
    const { state, errors } = outcome('loads a plugin whose dispose throws when the app stops')
    expect(state).toBe('failed')
    expect(errors).toHaveLength(1)
    expect(errors[0].match(/- unexpected error: \[app\] Error: dispose broke/g)).toHaveLength(1)
  })

  it('still sees an internal/error after the app stopped and its logger went', () => {
    const { state, errors } = outcome('emits an internal/error after the app stopped')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining('- unexpected error: [app] Error: too late')])
  })

  it('fails a test that emitted a warning under Cordis 4\'s name, which Koishi\'s owner would never see', () => {
    const { state, errors } = outcome('emits a warning as internal/warn, which Koishi does not log')
    expect(state).toBe('failed')
    expect(errors).toEqual([expect.stringContaining('- unexpected warn: [unlogged internal/warn] MCP server "odd": cannot connect')])
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
    expect(errors).toEqual([expect.stringMatching(/^outside any test .*\n- unexpected warn: \[dogu\] logged in beforeAll$/)])
    expect(fileErrors()).toEqual([expect.stringContaining('- unexpected warn: [dogu] logged in the last afterAll')])
  })
})
