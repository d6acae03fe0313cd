// Ctrl-C in a real terminal: the built playground (lib/index.js) runs in a tmux pane, keys
// are sent with `tmux send-keys`, and the screen is read with `tmux capture-pane`. Every
// wait polls the screen for text, with a generous bound, never a fixed delay.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { guardOutput } from '../../../test-support/log-guard'

const root = resolve(import.meta.dirname, '../../..')
const entry = resolve(import.meta.dirname, '../lib/index.js')
// A server of the tests' own: the developer's tmux sessions are neither seen nor touched.
const socket = `dogu-test-${process.pid}`
const HINT = '(To exit, press Ctrl-C again or type exit)'

let dir: string
let session: string | undefined
let n = 0

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })
}

beforeAll(() => {
  if (spawnSync('tmux', ['-V']).error) throw new Error('the terminal tests need tmux: install it with `sudo apt-get install -y tmux` (Debian/Ubuntu)')
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`node scripts/build.mjs @dogu/playground\` first`)
})
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-terminal-')) })
afterEach(async () => {
  if (session) {
    // What the playground printed: its `! …` lines and its stderr fail the test.
    if (alive(session) !== undefined) guardOutput(screen(), 'playground', { marker: '! ' })
    spawnSync('tmux', ['-L', socket, 'kill-session', '-t', session])
    session = undefined
  }
  const stderr = join(dir, 'stderr.log')
  if (existsSync(stderr)) guardOutput(readFileSync(stderr, 'utf8'), 'playground')
  await rm(dir, { recursive: true, force: true })
})

/** `yarn start --data DIR` in a 200×50 tmux pane that stays on screen after the playground exits. */
function start() {
  session = `dogu-${process.pid}-${++n}`
  // A model configured in the developer's shell would turn the lines into chat.
  const command = `env DOGU_BASE_URL= DOGU_MODEL= DOGU_API_KEY= DOGU_DATA= '${process.execPath}' '${entry}' --data '${join(dir, 'data')}' 2>'${join(dir, 'stderr.log')}'`
  tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', '-c', root, command, ';', 'set-option', '-t', session, 'remain-on-exit', 'on')
}

/** The whole pane, its scrollback included, wrapped lines joined. */
function screen(): string {
  return tmux('capture-pane', '-p', '-J', '-S', '-', '-t', session!)
}

/** Whether the pane's process still runs: `false` once it has exited (its pane is dead), `undefined` without the session. */
function alive(name: string): boolean | undefined {
  const result = spawnSync('tmux', ['-L', socket, 'display-message', '-p', '-t', name, '#{pane_dead}'], { encoding: 'utf8' })
  if (result.status !== 0) return undefined
  return result.stdout.trim() !== '1'
}

/** Resolves once `check()` holds; fails after 20 s, showing the screen. */
async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 20_000
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${screen()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const shows = (pattern: RegExp) => until(() => pattern.test(screen()), String(pattern))
const count = (text: string) => screen().split(text).length - 1

/** Pids of the `sleep 45` processes under the pane's process (the shell tool runs them sandboxed, a few levels down). */
function sleepsUnderPane(): number[] {
  const pane = Number(tmux('display-message', '-p', '-t', session!, '#{pane_pid}').trim())
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).trim().split('\n').map((line) => {
    const [, pid, ppid, args] = /^\s*(\d+)\s+(\d+)\s(.*)$/.exec(line)!
    return { pid: Number(pid), ppid: Number(ppid), args }
  })
  const parent = new Map(rows.map((row) => [row.pid, row.ppid]))
  const under = (pid: number) => {
    for (let at = parent.get(pid); at !== undefined && at > 1; at = parent.get(at)) if (at === pane) return true
    return false
  }
  return rows.filter((row) => row.args === 'sleep 45' && under(row.pid)).map((row) => row.pid)
}

describe('Ctrl-C in the playground', () => {
  it('cancels a running call at once, then hints at an idle prompt, and a second press exits', async () => {
    start()
    await shows(/^dogu> $/m)
    tmux('send-keys', '-t', session!, 'call bash {"command":"sleep 45"}', 'Enter')
    await shows(/\[n\] no  \[e\] edit $/m)
    tmux('send-keys', '-t', session!, 'y', 'Enter')
    // The call has started once its command runs.
    await until(() => sleepsUnderPane().length > 0, 'sleep 45 to run')
    const pressed = Date.now()
    tmux('send-keys', '-t', session!, 'C-c')
    await shows(/"status": "cancelled"[\s\S]*\ndogu> $/m)
    // Not 45 s later: the bound is generous, the sleep far longer.
    expect(Date.now() - pressed).toBeLessThan(30_000)
    expect(screen()).toMatch(/^ {2}← bash cancelled in [\d.]+ ms$/m)
    const [, duration] = /"durationMs": (\d+)/.exec(screen())!
    expect(Number(duration)).toBeLessThan(40_000)
    // The shell tool killed the command with the call.
    await until(() => sleepsUnderPane().length === 0, 'sleep 45 to end')

    // At the idle prompt, what was typed is dropped and the hint shown: the playground stays.
    tmux('send-keys', '-t', session!, 'lis', 'C-c')
    await shows(new RegExp(`^${escape(HINT)}\\ndogu> $`, 'm'))
    expect(alive(session!)).toBe(true)
    // A command typed since the hint: the next press hints again.
    tmux('send-keys', '-t', session!, 'list', 'Enter')
    await shows(/^countdown +\[read\] +Count down/m)
    tmux('send-keys', '-t', session!, 'C-c')
    await until(() => count(HINT) === 2, 'the second hint')
    // So does a press more than 2 s after the hint (waiting longer is always safe).
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    tmux('send-keys', '-t', session!, 'C-c')
    await until(() => count(HINT) === 3, 'the third hint')
    expect(alive(session!)).toBe(true)
    // Two presses in a row, past the last hint's window: a hint, then the playground exits.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    tmux('send-keys', '-t', session!, 'C-c', 'C-c')
    await until(() => alive(session!) === false, 'the playground to exit')
    expect(count(HINT)).toBe(4)
  })

  it('denies the permission question it is pressed at, and the playground stays', async () => {
    start()
    await shows(/^dogu> $/m)
    tmux('send-keys', '-t', session!, 'call notes {"action":"add","text":"hi"}', 'Enter')
    await shows(/\[y\] once {2}\[s\] session {2}\[a\] always {2}\[n\] no {2}\[e\] edit $/m)
    tmux('send-keys', '-t', session!, 'C-c')
    await shows(/"status": "denied"[\s\S]*\ndogu> $/m)
    expect(screen()).toContain('[n] no  [e] edit n (Ctrl-C)\n  ← notes denied in ')
    expect(screen()).toContain('"content": "Permission denied: terminal:playground-user declined it: denied with Ctrl-C at the terminal"')
    expect(screen()).not.toContain(HINT)
    // Still there, and the note was not added.
    tmux('send-keys', '-t', session!, 'call notes {"action":"list"}', 'Enter')
    await shows(/"content": "No notes yet\."/)
    expect(alive(session!)).toBe(true)
    tmux('send-keys', '-t', session!, 'exit', 'Enter')
    await until(() => alive(session!) === false, 'the playground to exit')
  })
})

describe('calls made from the console, seen at the terminal', () => {
  /** The console's address, from the line the playground prints at start. */
  async function consoleUrl(): Promise<string> {
    await shows(/^http:\/\/127\.0\.0\.1:\d+\/\S*$/m)
    return /^(http:\/\/127\.0\.0\.1:\d+\/\S*?)\/?$/m.exec(screen())![1]
  }
  const call = (url: string, tool: string, args: unknown) => fetch(`${url}/api/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tool, args, sessionId: 'webui' }),
  }).then(async (response) => ({ status: response.status, body: await response.json() }))

  it('prints their lines above the prompt and redraws it with what was typed', async () => {
    start()
    const url = await consoleUrl()
    await shows(/^dogu> $/m)
    tmux('send-keys', '-t', session!, 'lis')
    await shows(/^dogu> lis$/m)
    const result = await call(url, 'lookup', { q: 'France' })
    expect(result.status).toBe(200)
    await shows(/^ {2}← lookup ok in [\d.]+ ms\ndogu> lis$/m)
    // The line under the cursor is still the user's: finishing it runs `list`.
    tmux('send-keys', '-t', session!, 't', 'Enter')
    await shows(/^countdown +\[read\] +Count down/m)
    expect(screen()).not.toContain('Unknown command')
    tmux('send-keys', '-t', session!, 'exit', 'Enter')
    await until(() => alive(session!) === false, 'the playground to exit')
  })

  it('leaves the console\'s questions to the console: the prompt stays the user\'s', async () => {
    start()
    const url = await consoleUrl()
    await shows(/^dogu> $/m)
    tmux('send-keys', '-t', session!, 'lis')
    const pending = call(url, 'notes', { action: 'add', text: 'from the console' })
    const post = (method: string, payload: unknown) => fetch(`${url}/api/${method}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload),
    }).then((response) => response.json())
    let questions: { id: string }[] = []
    for (const deadline = Date.now() + 20_000; !questions.length; await new Promise((resolve) => setTimeout(resolve, 50))) {
      if (Date.now() > deadline) throw new Error(`no question reached the console; the screen:\n${screen()}`)
      questions = await post('approvals.list', {})
    }
    // Only the console's operator may answer a console call: the terminal is not asked.
    expect(screen()).not.toContain('[y] once')
    await post('approvals.answer', { id: questions[0].id, decision: 'allow', scope: 'once' })
    expect((await pending).body.result.status).toBe('ok')
    await shows(/^ {2}← notes ok in [\d.]+ ms\ndogu> lis$/m)
    tmux('send-keys', '-t', session!, 't', 'Enter')
    await shows(/^countdown +\[read\] +Count down/m)
    expect(screen()).not.toContain('Unknown command')
    tmux('send-keys', '-t', session!, 'exit', 'Enter')
    await until(() => alive(session!) === false, 'the playground to exit')
  })
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
