import { afterEach, describe, expect, it } from 'vitest'
import { DoguError, type Logger, type ToolResult } from '../src'
import { REDACTED, Redactor } from '../src/redaction/redactor'

const TOKEN = 'sk-live-4f9a8b7c6d5e'
const OTHER = 'ghp_0123456789abcdef'

/** A logger that keeps its warnings. */
function recorder(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return {
    warnings,
    debug() {},
    warn: (format, ...args) => warnings.push(args.reduce<string>((text, arg) => text.replace(/%[sd]/, String(arg)), format)),
  }
}

function result(fields: Partial<ToolResult>): ToolResult {
  return { id: 'c1', name: 'echo', status: 'ok', content: '', durationMs: 1, ...fields }
}

const ENV = ['DOGU_TEST_SECRET', 'DOGU_TEST_OTHER', 'DOGU_TEST_SHORT', 'DOGU_TEST_EMPTY', 'DOGU_TEST_UNSET']
afterEach(() => {
  for (const name of ENV) delete process.env[name]
})

describe('Redactor: env', () => {
  it('redacts the values of the named variables, read at construction, and warns by name for unset, empty and short ones', () => {
    process.env.DOGU_TEST_SECRET = TOKEN
    process.env.DOGU_TEST_OTHER = OTHER
    process.env.DOGU_TEST_SHORT = 'abc'
    process.env.DOGU_TEST_EMPTY = ''
    const logger = recorder()
    const redactor = new Redactor({ env: ENV }, logger)
    process.env.DOGU_TEST_SECRET = 'changed-later-value'
    expect(redactor.active).toBe(true)
    expect(redactor.text(`key=${TOKEN}; gh=${OTHER}; abc; changed-later-value`)).toBe('key=[redacted]; gh=[redacted]; abc; changed-later-value')
    expect(logger.warnings).toEqual([
      'redact.env: the value of DOGU_TEST_SHORT is shorter than 4 characters and is not redacted (it would redact ordinary text)',
      'redact.env: DOGU_TEST_EMPTY is not set or is empty; nothing is redacted for it',
      'redact.env: DOGU_TEST_UNSET is not set or is empty; nothing is redacted for it',
    ])
  })

  it('warns once for a name listed twice', () => {
    const logger = recorder()
    const redactor = new Redactor({ env: ['DOGU_TEST_UNSET', 'DOGU_TEST_UNSET'] }, logger)
    expect(logger.warnings).toEqual(['redact.env: DOGU_TEST_UNSET is not set or is empty; nothing is redacted for it'])
    expect(redactor.active).toBe(false)
  })
})

describe('Redactor: patterns', () => {
  it('redacts every match, with `$` in the text kept literally', () => {
    const redactor = new Redactor({ patterns: ['sk-[a-z]+-[0-9a-f]{12}', 'AKIA[0-9A-Z]{16}'] })
    expect(redactor.text(`a ${TOKEN} b AKIAABCDEFGHIJKLMNOP c $& $1 ${TOKEN}`)).toBe('a [redacted] b [redacted] c $& $1 [redacted]')
  })

  it('finishes on a catastrophic pattern (the linear-time engine)', () => {
    const redactor = new Redactor({ patterns: ['^(a+)+$'] })
    const evil = `${'a'.repeat(50_000)}!`
    expect(redactor.text(evil)).toBe(evil)
    expect(redactor.text('a'.repeat(50_000))).toBe(REDACTED)
  }, 60_000)

  it('refuses lookaround, backreferences and invalid patterns with a coded error naming the pattern and why', () => {
    const unsupported = 'which the linear-time engine (RE2) cannot run: it has no backreferences, no lookaround and no repetition counts over 1000'
    const refused: [string[], string][] = [
      [['ok-\\d+', '(?<=Bearer )\\w+'], `redact.patterns[1] "(?<=Bearer )\\\\w+" uses lookaround ((?<=), ${unsupported}`],
      [['(?!x)y'], `redact.patterns[0] "(?!x)y" uses lookaround ((?!), ${unsupported}`],
      [['(a)\\1'], `redact.patterns[0] "(a)\\\\1" uses a backreference (\\1), ${unsupported}`],
      [['a{1,5000}'], `redact.patterns[0] "a{1,5000}" is not supported (invalid repeat count: \`{1,5000}\`): the linear-time engine (RE2) cannot run: it has no backreferences, no lookaround and no repetition counts over 1000`],
      [['(unclosed'], 'redact.patterns[0] "(unclosed" is not a valid regular expression: Invalid regular expression: /(unclosed/u: Unterminated group'],
    ]
    for (const [patterns, message] of refused) {
      const error = catchError(() => new Redactor({ patterns }))
      expect(DoguError.is(error, 'INVALID_OPTIONS')).toBe(true)
      expect((error as Error).message).toBe(message)
    }
  })

  it('refuses a pattern that matches the empty string', () => {
    for (const [index, source] of ['x*', '\\b', '^', '(?:sk-\\w+)?', '$'].entries()) {
      const error = catchError(() => new Redactor({ patterns: [...Array(index).fill('sk-\\w+'), source] }))
      expect(DoguError.is(error, 'INVALID_OPTIONS')).toBe(true)
      expect((error as Error).message).toBe(`redact.patterns[${index}] ${JSON.stringify(source)} matches the empty string: a secret pattern must match at least one character`)
    }
  })

  it('refuses options of the wrong shape', () => {
    const error = catchError(() => new Redactor({ patterns: 'sk-\\w+' as never }))
    expect(DoguError.is(error, 'INVALID_OPTIONS')).toBe(true)
    expect((error as Error).message).toBe('redact.patterns must be a list of regular expressions (strings)')
    expect((catchError(() => new Redactor({ env: [1] as never })) as Error).message).toBe('redact.env must be a list of environment variable names')
  })
})

describe('Redactor: text', () => {
  it('is inactive, and changes nothing, with nothing to redact', () => {
    const redactor = new Redactor()
    expect(redactor.active).toBe(false)
    const r = result({ content: TOKEN, data: { TOKEN } })
    expect(redactor.result(r)).toBe(r)
  })

  it('replaces one secret inside another, overlapping and touching secrets as one [redacted]', () => {
    const redactor = new Redactor()
    redactor.add(['abcd', 'abcdefgh', 'ghij', 'wxyz'])
    // `abcd` lies inside `abcdefgh`; `ghij` overlaps it; `wxyz` touches it.
    expect(redactor.text('<abcdefghij> <abcd> <abcdefghwxyz> <ab cd>')).toBe('<[redacted]> <[redacted]> <[redacted]> <ab cd>')
  })

  it('leaves no trace of a secret that overlaps itself, nor of a literal overlapping a pattern match', () => {
    const redactor = new Redactor({ patterns: ['tok_[0-9]{4}'] })
    redactor.add(['abab', 'aaaa', '99xy'])
    expect(redactor.text('ababab|aaaaaaa|tok_123499xy|a')).toBe('[redacted]|[redacted]|[redacted]|a')
  })

  it('finds secrets among astral characters and at the text\'s edges', () => {
    const redactor = new Redactor({ patterns: ['😀+'] })
    redactor.add([TOKEN])
    expect(redactor.text(`${TOKEN}😀😀é${TOKEN}`)).toBe('[redacted]é[redacted]')
  })

  it('returns the same string when no secret occurs', () => {
    const redactor = new Redactor({ patterns: ['sk-\\w+'] })
    redactor.add([OTHER])
    const text = `nothing secret here ${'x'.repeat(1000)}`
    expect(redactor.text(text)).toBe(text)
    expect(redactor.text('')).toBe('')
  })
})

describe('Redactor: results and data', () => {
  it('redacts content, data (deep, keys too) and artifacts; images are kept', () => {
    const redactor = new Redactor()
    redactor.add([TOKEN])
    const images = [{ mimeType: 'image/png', data: TOKEN }]
    const input = result({
      content: `token ${TOKEN}`,
      images,
      data: { headers: [{ name: 'Authorization', value: `Bearer ${TOKEN}` }], count: 2, ok: true, none: null, [TOKEN]: 'key' },
      artifacts: [{ kind: 'diff', path: 'a.txt', diff: `+${TOKEN}` }],
    })
    const snapshot = structuredClone(input)
    const output = redactor.result(input)
    expect(output).toEqual({
      ...snapshot,
      content: 'token [redacted]',
      data: { headers: [{ name: 'Authorization', value: 'Bearer [redacted]' }], count: 2, ok: true, none: null, [REDACTED]: 'key' },
      artifacts: [{ kind: 'diff', path: 'a.txt', diff: '+[redacted]' }],
    })
    expect(output.images).toBe(images)
    // The input is not modified.
    expect(input).toEqual(snapshot)
  })

  it('returns the same result, data and artifacts when nothing changed', () => {
    const redactor = new Redactor({ patterns: ['sk-\\w+'] })
    const data = { nested: [{ text: 'plain' }] }
    const artifacts = [{ kind: 'file', path: 'x' }]
    const input = result({ content: 'plain', data, artifacts })
    expect(redactor.result(input)).toBe(input)
    expect(redactor.value(data)).toBe(data)
    const changed = redactor.result({ ...input, content: 'sk-abc' })
    expect(changed.content).toBe(REDACTED)
    expect(changed.data).toBe(data)
    expect(changed.artifacts).toBe(artifacts)
  })

  it('copies cycles, keeps class instances and an own __proto__ key', () => {
    const redactor = new Redactor()
    redactor.add([TOKEN])
    const cyclic: Record<string, unknown> = { secret: TOKEN }
    cyclic.self = cyclic
    const copy = redactor.value(cyclic) as Record<string, unknown>
    expect(copy).not.toBe(cyclic)
    expect(copy.secret).toBe(REDACTED)
    expect(copy.self).toBe(copy)
    expect(cyclic.secret).toBe(TOKEN)

    const date = new Date(0)
    const parsed = JSON.parse(`{"__proto__": {"polluted": "${TOKEN}"}, "when": null}`) as Record<string, unknown>
    parsed.when = date
    const out = redactor.value(parsed) as Record<string, unknown>
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: REDACTED })
    expect(out.when).toBe(date)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('redacts a bare string value and leaves other primitives', () => {
    const redactor = new Redactor()
    redactor.add([TOKEN])
    expect(redactor.value(`x${TOKEN}`)).toBe('x[redacted]')
    expect(redactor.value(42)).toBe(42)
    expect(redactor.value(undefined)).toBeUndefined()
  })
})

describe('Redactor: add', () => {
  it('counts holders: a value two holders added stays until both disposed; a second dispose changes nothing', () => {
    const redactor = new Redactor()
    const first = redactor.add([TOKEN, OTHER])
    const second = redactor.add([TOKEN])
    expect(redactor.text(`${TOKEN} ${OTHER}`)).toBe('[redacted] [redacted]')
    first()
    expect(redactor.text(`${TOKEN} ${OTHER}`)).toBe(`[redacted] ${OTHER}`)
    first()
    expect(redactor.text(`${TOKEN} ${OTHER}`)).toBe(`[redacted] ${OTHER}`)
    second()
    expect(redactor.text(`${TOKEN} ${OTHER}`)).toBe(`${TOKEN} ${OTHER}`)
    expect(redactor.active).toBe(false)
    second()
    expect(redactor.active).toBe(false)
  })

  it('keeps an env value when a plugin that added the same value is disposed', () => {
    process.env.DOGU_TEST_SECRET = TOKEN
    const redactor = new Redactor({ env: ['DOGU_TEST_SECRET'] })
    redactor.add([TOKEN])()
    expect(redactor.text(TOKEN)).toBe(REDACTED)
  })

  it('skips values shorter than 4 characters and values listed twice in one call', () => {
    const redactor = new Redactor()
    const dispose = redactor.add(['abc', '', 'abcd', 'abcd'])
    expect(redactor.text('abc abcd')).toBe('abc [redacted]')
    dispose()
    expect(redactor.active).toBe(false)
    expect(redactor.add(['ab', 'x'])).toBeTypeOf('function')
    expect(redactor.active).toBe(false)
  })

  it('adds nothing with builtin: false, while env and patterns still apply', () => {
    process.env.DOGU_TEST_SECRET = TOKEN
    const redactor = new Redactor({ env: ['DOGU_TEST_SECRET'], patterns: ['ghp_\\w+'], builtin: false })
    const dispose = redactor.add(['console-token-1234'])
    expect(redactor.text(`${TOKEN} ${OTHER} console-token-1234`)).toBe('[redacted] [redacted] console-token-1234')
    dispose()
    expect(new Redactor({ builtin: false }).active).toBe(false)
  })
})

describe('Redactor: logger', () => {
  it('redacts the format, string and data arguments and errors of every line, with secrets added later', () => {
    const lines: unknown[][] = []
    const inner: Logger = { debug: (...args) => lines.push(['debug', ...args]), warn: (...args) => lines.push(['warn', ...args]) }
    const redactor = new Redactor()
    const logger = redactor.logger(inner)
    expect(logger.info).toBeUndefined()
    const error = new TypeError(`bad token ${TOKEN}`)
    logger.warn(`a %s %o %s ${TOKEN}`, TOKEN, { TOKEN }, error)
    redactor.add([TOKEN])
    logger.warn(`a %s %o %s ${TOKEN}`, TOKEN, { TOKEN }, error)
    logger.debug('%d', 1)
    expect(lines[0]).toEqual(['warn', `a %s %o %s ${TOKEN}`, TOKEN, { TOKEN }, error])
    const [, format, text, data, logged] = lines[1] as [string, string, string, unknown, Error]
    expect({ format, text, data }).toEqual({ format: 'a %s %o %s [redacted]', text: REDACTED, data: { TOKEN: REDACTED } })
    expect(logged).toBeInstanceOf(TypeError)
    expect(logged.message).toBe('bad token [redacted]')
    expect(logged.stack).not.toContain(TOKEN)
    expect(String(logged)).toBe('TypeError: bad token [redacted]')
    // The caller's error is not changed.
    expect(error.message).toBe(`bad token ${TOKEN}`)
    expect(lines[2]).toEqual(['debug', '%d', 1])
  })
})

function catchError(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected an error')
}
