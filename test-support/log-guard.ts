// Errors and warnings fail tests (docs/testing.md). Every harness that builds a Koishi app or
// a Cordis 4 context hands it to `guardLogs`; from then on each error or warning line is
// captured, and a test during which a line appeared that it did not declare fails, naming
// the line. A test that provokes one on purpose declares it:
//
//   const guard = guardLogs(app)   // a harness does this; for the same app it returns the same guard
//   guard.expect(/could not save permission grants/)
//
// and the test output carries it as one line, without its stack trace:
//
//   expected warn: [dogu] could not save permission grants: EACCES: permission denied, open '…'
//
// API:
// - `guardLogs(appOrCtx)`: captures the app's lines; returns the guard of the current test.
// - `guard.expect(pattern, { optional })`: declares a line (a substring or a RegExp, matched
//   against `[name] message`: the logger's or fiber's name and the text without its stack
//   frames). It covers every matching line of the current test (or, outside a test, until the
//   next one starts). A declared line that never appeared fails the test too, unless
//   `optional` (for a line the test cannot make certain).
// - `guard.lines`: what every guarded app logged in the current test so far.
// - `logGuard`: the same guard, for a test whose app is built where it cannot reach it.
// - `guardOutput(stream, name, { marker })`: what an app the guard cannot listen to prints (a
//   child process's stderr, the playground's transcript); `reportLine(line)` for one line.
//   A child's line read after its test finished fails the next test (or the file).
// Lines and declarations belong to the test, not to one app. Tests of a file run one at a
// time (no `.concurrent`): the guard keeps one window of lines, the running test's.
//
// What is captured:
// - Koishi 4 (cordis 3, reggol): every Koishi logger's lines of type `error` and `warn`,
//   through a logger target of the guard's own. `internal/error` and `internal/warning` reach
//   it as Koishi's logger service writes them (`[app] …`); once that service is gone (while
//   and after the app stops) the guard takes the events itself, under the same name. Koishi's
//   console target prints nothing: what it would have printed of errors and warnings is here,
//   and its info and debug lines have no place in the test output.
// - Cordis 4: the `internal/error` events (type `error`) and the `internal/warn` events (type
//   `warn`), which is where Cordis 4 and Dogu's services report them (Dogu's runtime warnings
//   go out as `internal/warn`, see packages/cordis/src/cordis-logger.ts). Cordis prints them on
//   the console only when nobody listens; the guard listens. `internal/info` is neither
//   captured nor printed, as Koishi's info lines are not. The listeners are put straight into
//   the events service's hook lists rather than through `ctx.on`, which ties a listener to
//   the root fiber: an error raised while the app is disposed is seen too. Lines written
//   straight to `@cordisjs/plugin-logger` are not captured (none of Dogu's packages write there).
// - A warning emitted under the other generation's event name (`internal/warn` on Koishi,
//   `internal/warning` on Cordis 4), which that host neither logs nor prints: it is captured
//   as `[unlogged internal/warn] …`, a warning the app's owner would never see.
//
// When lines are checked: per test, once it has finished (after every `afterEach`, so what an
// app logs while a harness stops it counts), in an `onTestFinished` hook the guard's own
// `beforeEach` registers for every test of a file that imports this module. A line logged
// outside any test (in a `beforeAll` or `afterAll`, or late, after a test finished) fails the
// next test, or the file in the guard's `afterAll`, saying where it came from.
//
// Cost: one listener per event and one logger target; nothing runs per tool call.
import { format } from 'node:util'
import { afterAll, beforeEach, type TestContext } from 'vitest'

export type LogType = 'error' | 'warn'

/** One error or warning line an app logged. */
export interface LogLine {
  type: LogType
  /** The Koishi logger's name (`dogu`, `app`), or on Cordis 4 the emitting fiber's (`app` for the root). */
  name: string
  /** The text without stack frames. */
  message: string
  /** The text as logged, with the stack trace of an error. */
  text: string
  /** The error the line was logged with, where the guard saw the object (Cordis 4's events; Koishi's once its logger is gone). */
  error?: unknown
}

export interface ExpectOptions {
  /** The line may not appear: a test whose outcome decides it (a race it does not control). @default false */
  optional?: boolean
}

export interface LogGuard {
  /** Declares a line the current test provokes on purpose; `pattern` is matched against `[name] message`. */
  expect(pattern: string | RegExp, options?: ExpectOptions): void
  /** Every line captured so far in the current test (or since the last test, outside one). */
  readonly lines: readonly LogLine[]
}

interface Expectation {
  pattern: string | RegExp
  optional: boolean
  seen: number
  /** Where the test declared it, for a declaration that never matched. */
  at: string
}

interface Window {
  /** `test "…"` or `outside any test (…)`. */
  where: string
  lines: LogLine[]
  expectations: Expectation[]
}

let current: Window = { where: 'outside any test (before the first one)', lines: [], expectations: [] }

/**
 * The guard of the current test: what `guardLogs` returns, for a test whose app is built
 * where it cannot reach it (a harness that throws before returning the app).
 */
export const logGuard: LogGuard = {
  expect(pattern, options = {}) {
    // The caller's frame: [0] is the message, [1] this method.
    const at = new Error().stack?.split('\n')[2]?.trim() ?? ''
    current.expectations.push({ pattern, optional: options.optional ?? false, seen: 0, at })
  },
  get lines() {
    return current.lines
  },
}

beforeEach((context: TestContext) => {
  const before = current
  const name = context.task.name
  const window: Window = { where: `test "${name}"`, lines: [], expectations: [] }
  current = window
  // Runs after every afterEach (the harnesses stop their apps there) and after the test's own
  // onTestFinished hooks, which were registered later.
  context.onTestFinished(() => {
    current = { where: `outside any test (since test "${name}" finished: a beforeAll or afterAll hook, or a line logged late)`, lines: [], expectations: [] }
    settle(window)
  })
  settle(before)
})

afterAll(() => {
  const last = current
  current = { where: 'outside any test (after the file\'s last test and hooks)', lines: [], expectations: [] }
  settle(last)
})

const installed = new WeakSet<object>()

/**
 * Captures the error and warning lines of a Koishi app (`new App()`) or a Cordis 4 context
 * (`new Context()`), for the guard's checks; returns the guard, through which a test declares
 * the lines it expects. Calling it again for the same app changes nothing.
 */
export function guardLogs(app: object): LogGuard {
  if (installed.has(app)) return logGuard
  installed.add(app)
  const host = app as Record<string, any>
  // `in`, not a read: reading a property a context does not have can warn (cordis 3) or throw (Cordis 4).
  if ('lifecycle' in host && 'logger' in host) guardKoishi(host)
  else if ('fiber' in host && 'events' in host) guardCordis(host)
  else throw new TypeError('guardLogs: neither a Koishi app nor a Cordis 4 context')
  return logGuard
}

/**
 * Reports a line of an app the guard cannot listen to. It is checked as any captured line.
 */
export function reportLine(line: Omit<LogLine, 'text'> & { text?: string }): void {
  capture({ ...line, text: line.text ?? line.message })
}

/**
 * Reports what an app the guard cannot listen to prints: a child process's stderr (the stdio
 * `dogu-mcp`), or the playground's transcript, where its errors and warnings are `! …` lines
 * (`marker: '! '`: only lines that start with it count). `output` is a stream, read as it
 * comes, or all the text at once (a `spawnSync`'s). Each entry (a line, with the stack frames
 * and the error's fields printed after it) is reported as an error named `name`: printed
 * text does not tell errors from warnings. A stream's entry is taken as written at once: one
 * write, one or more whole entries.
 */
export function guardOutput(output: { on(event: 'data', listener: (chunk: Buffer | string) => void): unknown } | string, name: string, options: { marker?: string } = {}): void {
  const { marker } = options
  const read = (text: string) => {
    let entry: string[] = []
    const report = () => {
      if (!entry.length) return
      const first = entry.findIndex((line) => frame.test(line))
      reportLine({ type: 'error', name, message: (first < 0 ? entry : entry.slice(0, first)).join('\n'), text: entry.join('\n') })
      entry = []
    }
    for (const line of text.split('\n')) {
      // What Node prints after an error's first line: indented frames and fields, a closing
      // brace. The marked lines of a transcript are one line each.
      if (marker === undefined && entry.length && (/^\s/.test(line) || line === '}')) {
        entry.push(line)
        continue
      }
      report()
      if (marker === undefined ? line.trim() : line.startsWith(marker)) entry.push(line.slice(marker?.length ?? 0))
    }
    report()
  }
  if (typeof output === 'string') return read(output)
  let rest = ''
  output.on('data', (chunk) => {
    const text = rest + chunk
    const end = text.lastIndexOf('\n') + 1
    rest = text.slice(end)
    read(text.slice(0, end))
  })
}

function capture(line: LogLine) {
  current.lines.push(line)
}

/** What an error or a formatted event says, and who said it. */
function lineOf(type: LogType, name: string, args: unknown[]): LogLine {
  const [first, ...rest] = args
  if (first instanceof Error && !rest.length) {
    const text = first.stack ?? String(first)
    return { type, name, message: withoutStack(text), text, error: first }
  }
  // An error among the arguments: its name and message in the message, its stack in the text.
  const message = format(...args.map((arg) => arg instanceof Error ? String(arg) : arg))
  return { type, name, message, text: format(...args), ...(first instanceof Error ? { error: first } : {}) }
}

const frame = /^\s+at .*$/

function withoutStack(text: string): string {
  return text.split('\n').filter((line) => !frame.test(line)).join('\n')
}

// Koishi 4: reggol's Logger class is global to the process; one target per class.
interface ReggolRecord { type: string; name: string; content: string }
interface ReggolTarget { levels?: { base: number }; record?(record: ReggolRecord): void; print?(text: string): void }
interface ReggolClass { targets: ReggolTarget[] }

const targeted = new WeakSet<ReggolClass>()

function guardKoishi(app: Record<string, any>) {
  const Logger = app.logger('dogu').constructor as ReggolClass
  if (!targeted.has(Logger)) {
    targeted.add(Logger)
    // The console target prints nothing: errors and warnings come through the guard instead,
    // and info and debug lines have no place in the test output.
    for (const target of Logger.targets) if (!target.record) target.levels = { base: 0 }
    Logger.targets.push({
      // error and warn are levels 1 and 2; debug (3) never reaches the target.
      levels: { base: 2 },
      record({ type, name, content }) {
        if (type === 'error' || type === 'warn') capture({ type, name, message: withoutStack(content), text: content })
      },
    })
  }
  // Koishi's logger service writes internal/error and internal/warning as `[app] …` lines
  // while it is loaded; it goes when the app stops, and then the guard takes them itself.
  const hooks = app.lifecycle._hooks as Record<string, { ctx: any; callback: Function; global?: boolean }[]>
  for (const [event, type] of [['internal/error', 'error'], ['internal/warning', 'warn']] as const) {
    const list = hooks[event] ??= []
    const logger = list.find((hook) => hook.ctx?.runtime?.plugin?.name === 'LoggerService')
    list.push({
      ctx: app,
      global: true,
      callback: (...args: unknown[]) => {
        if (!logger || !list.includes(logger)) capture(lineOf(type, 'app', args))
      },
    })
  }
  // Cordis 4's name for a warning, which Koishi neither logs nor prints: one emitted on a
  // Koishi app is lost to its owner, and fails the test as such.
  unheard(hooks, 'internal/warn', app)
}

/** A line nobody would have seen: emitted on the other Cordis generation's event name. */
function unheard(hooks: Record<string, { ctx: any; callback: Function; global?: boolean }[]>, event: string, ctx: object) {
  (hooks[event] ??= []).push({ ctx, global: true, callback: (...args: unknown[]) => capture(lineOf('warn', `unlogged ${event}`, args)) })
}

function guardCordis(ctx: Record<string, any>) {
  const hooks = ctx.events._hooks as Record<string, { ctx: any; callback: Function; global?: boolean }[]>
  // A listener that does nothing: Cordis prints internal/info on the console only when nobody
  // listens, and info lines (a store migrated) have no place in the test output.
  ;(hooks['internal/info'] ??= []).push({ ctx, global: true, callback: () => {} })
  for (const [event, type] of [['internal/error', 'error'], ['internal/warn', 'warn']] as const) {
    (hooks[event] ??= []).push({
      ctx,
      global: true,
      callback(this: { fiber?: { name?: string } } | null, ...args: unknown[]) {
        const name = this?.fiber?.name
        capture(lineOf(type, !name || name === 'root' ? 'app' : name, args))
      },
    })
  }
  // cordis 3's (Koishi's) name for a warning, which Cordis 4 neither logs nor prints.
  unheard(hooks, 'internal/warning', ctx)
}

/** `expected warn: [dogu] …`: one line, however many the message has. */
function oneLine(line: LogLine): string {
  return `${line.type}: [${line.name}] ${line.message.replace(/\s*\n\s*/g, ' ⏎ ')}`
}

function matches(expectation: Expectation, line: LogLine): boolean {
  const subject = `[${line.name}] ${line.message}`
  return typeof expectation.pattern === 'string' ? subject.includes(expectation.pattern) : new RegExp(expectation.pattern.source, expectation.pattern.flags.replace('g', '')).test(subject)
}

/** Prints the expected lines of a window; throws naming the lines nobody expected and the expectations nothing met. */
function settle(window: Window) {
  const unexpected: LogLine[] = []
  for (const line of window.lines) {
    const met = window.expectations.filter((expectation) => matches(expectation, line))
    for (const expectation of met) expectation.seen++
    if (met.length) console.log(`expected ${oneLine(line)}`)
    else unexpected.push(line)
  }
  const absent = window.expectations.filter((expectation) => !expectation.optional && !expectation.seen)
  if (!unexpected.length && !absent.length) return
  const problems = [
    ...unexpected.map((line) => `unexpected ${line.type}: [${line.name}] ${indent(shortStack(line.text))}`),
    ...absent.map((expectation) => `expected a line matching ${String(expectation.pattern)} (declared ${expectation.at}), but none appeared`),
  ]
  const error = new Error(`${window.where}: the log does not match what the test declared (a test that provokes an error or warning declares it: guard.expect(pattern), docs/testing.md):\n${problems.map((problem) => `- ${problem}`).join('\n')}`)
  // The stack of this check says nothing; the message names the lines.
  error.stack = error.message
  throw error
}

/** The message and the first frames of an unexpected error: enough to find where it came from. */
function shortStack(text: string): string {
  const lines = text.split('\n')
  const first = lines.findIndex((line) => frame.test(line))
  return first < 0 ? text : lines.slice(0, first + 6).join('\n')
}

function indent(text: string): string {
  return text.replace(/\n/g, '\n    ')
}
