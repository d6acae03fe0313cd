import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardOutput, logGuard } from '../../../test-support/log-guard'
import { DataInUseError, type PlaygroundOptions, startPlayground } from '../src'

const entry = resolve(import.meta.dirname, '../lib/index.js')
// A model configured in the developer's shell would turn the lines into chat.
const env = { ...process.env, DOGU_BASE_URL: '', DOGU_MODEL: '', DOGU_API_KEY: '', DOGU_DATA: '' }
const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d'

let dir: string
const children: ChildProcessWithoutNullStreams[] = []
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-data-')) })
afterEach(async () => {
  // A test that failed half-way leaves no playground running.
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill()
  await rm(dir, { recursive: true, force: true })
})

/** Starts the playground in this process, over a stream the test writes to. */
function open(options: PlaygroundOptions) {
  const input = new PassThrough()
  const output = new PassThrough()
  guardOutput(output, 'playground', { marker: '! ' })
  let transcript = ''
  output.on('data', (chunk) => { transcript += chunk })
  const done = startPlayground({ input, output, ...options })
  return {
    get transcript() { return transcript },
    started: () => until(() => transcript, /^Dogu playground: /m),
    async end() {
      input.end()
      await done
      return transcript
    },
  }
}

/** Resolves once `text()` matches; fails after 10 s, saying what was there. */
async function until(text: () => string, pattern: RegExp) {
  const deadline = Date.now() + 10_000
  while (!pattern.test(text())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in:\n${text()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** `yarn start` in the test's folder. */
function start(args: string[] = [], extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [entry, ...args], { cwd: dir, env: { ...env, ...extra } })
  children.push(child)
  let stdout = ''
  child.stdout.on('data', (chunk) => { stdout += chunk })
  guardOutput(child.stdout, 'playground', { marker: '! ' })
  guardOutput(child.stderr, 'playground')
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  return { child, stdout: () => stdout, exited }
}

/** `yarn start` over piped `input`, to its end. */
function run(input: string, args: string[] = [], extra: Record<string, string> = {}) {
  const child = spawnSync(process.execPath, [entry, ...args], { input, encoding: 'utf8', timeout: 20_000, cwd: dir, env: { ...env, ...extra } })
  guardOutput(child.stdout, 'playground', { marker: '! ' })
  guardOutput(child.stderr, 'playground')
  return child
}

/** A pid nobody runs: that of a process that has ended. */
async function deadPid() {
  const child = spawn('true')
  await new Promise((resolve) => child.on('exit', resolve))
  return child.pid!
}

describe('the data folder\'s lock', () => {
  it('holds { pid, startedAt } while running, refuses a second playground on the folder, and goes at exit', async () => {
    const first = open({ dataDir: dir })
    await first.started()
    const lock = JSON.parse(await readFile(join(dir, '.lock'), 'utf8'))
    expect(lock).toEqual({ pid: process.pid, startedAt: expect.any(String) })
    expect(Date.now() - Date.parse(lock.startedAt)).toBeLessThan(10_000)

    const output = new PassThrough()
    let printed = ''
    output.on('data', (chunk) => { printed += chunk })
    const error = await startPlayground({ input: new PassThrough(), output, dataDir: dir }).catch((error) => error)
    expect(error).toBeInstanceOf(DataInUseError)
    expect(error).toMatchObject({ code: 'data_in_use', dir, holder: lock })
    expect(error.message).toMatch(new RegExp(`^${dir.replace(/[.\\/]/g, '\\$&')}/ is in use by another playground \\(pid ${process.pid}, started ${TIME}\\)\\. Stop it, or give this one its own folder: yarn start --data other-data \\(or DOGU_DATA=other-data\\)\\.$`))
    // It stopped before doing anything: no greeting, and the first one's lock is untouched.
    expect(printed).toBe('')
    expect(JSON.parse(await readFile(join(dir, '.lock'), 'utf8'))).toEqual(lock)

    await first.end()
    expect(existsSync(join(dir, '.lock'))).toBe(false)
    // The folder is free again.
    const again = open({ dataDir: dir })
    await again.started()
    await again.end()
    expect(existsSync(join(dir, '.lock'))).toBe(false)
  })

  it('takes over a lock whose process no longer runs, saying so in one line', async () => {
    const pid = await deadPid()
    writeFileSync(join(dir, '.lock'), JSON.stringify({ pid, startedAt: '2026-01-02T03:04:05.000Z' }))
    const playground = open({ dataDir: dir })
    await playground.started()
    expect(JSON.parse(await readFile(join(dir, '.lock'), 'utf8')).pid).toBe(process.pid)
    const transcript = await playground.end()
    const lines = transcript.split('\n')
    expect(lines[0]).toMatch(new RegExp(`^.*/\\.lock was left by pid ${pid} \\(started ${TIME}\\), which no longer runs: taking it over\\.$`))
    expect(lines[1]).toMatch(/^Dogu playground: /)
    expect(existsSync(join(dir, '.lock'))).toBe(false)
  })

  it('yarn start: a second playground in the same folder exits 1, naming the first one\'s pid', async () => {
    const first = start()
    await until(first.stdout, /^Dogu playground: /m)
    const lock = JSON.parse(await readFile(join(dir, 'data/.lock'), 'utf8'))
    expect(lock.pid).toBe(first.child.pid)

    logGuard.expect(/^\[playground\] data\/ is in use by another playground/)
    const second = run('list\n')
    expect(second.status).toBe(1)
    expect(second.stdout).toBe('')
    expect(second.stderr).toMatch(new RegExp(`^data/ is in use by another playground \\(pid ${first.child.pid}, started ${TIME}\\)\\. Stop it, or give this one its own folder: yarn start --data other-data \\(or DOGU_DATA=other-data\\)\\.\n$`))

    first.child.stdin.end('exit\n')
    expect(await first.exited).toBe(0)
    expect(existsSync(join(dir, 'data/.lock'))).toBe(false)
  })
})

describe('--data and DOGU_DATA', () => {
  // A write (asks, answered y) lands in the workspace; an "always" answer is stored in the grants.
  const script = 'call write {"path":"a.txt","content":"hi"}\ny\ncall notes {"action":"add","text":"x"}\na\n'

  async function expectDataIn(folder: string) {
    expect(await readFile(join(dir, folder, 'workspace/a.txt'), 'utf8')).toBe('hi')
    const stored = JSON.parse(await readFile(join(dir, folder, 'dogu/permissions.json'), 'utf8'))
    expect(stored.grants).toMatchObject([{ scope: 'always', permission: 'notes', target: 'add' }])
    expect(existsSync(join(dir, folder, '.lock'))).toBe(false)
    expect(existsSync(join(dir, 'data'))).toBe(false)
  }

  it('--data DIR puts the workspace and the grants in DIR', async () => {
    const child = run(script, ['--data', 'other-data'])
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('"content": "Created a.txt (1 line)."')
    await expectDataIn('other-data')
  })

  it('DOGU_DATA does the same; --data wins over it', async () => {
    const child = run(script, [], { DOGU_DATA: 'env-data' })
    expect(child.status).toBe(0)
    await expectDataIn('env-data')
    expect(run('list\n', ['--data=flag-data'], { DOGU_DATA: 'env-data' }).status).toBe(0)
    expect(existsSync(join(dir, 'flag-data/workspace'))).toBe(true)
  })

  it('two playgrounds on two folders run side by side', async () => {
    const first = start()
    await until(first.stdout, /^Dogu playground: /m)
    const second = run('list\n', ['--data', 'other-data'])
    expect(second.status).toBe(0)
    first.child.stdin.end()
    expect(await first.exited).toBe(0)
  })

  it('an unknown option exits 1 with its message', () => {
    logGuard.expect(/^\[playground\] Unknown option '--frob'/)
    const child = run('', ['--frob'])
    expect(child.status).toBe(1)
    expect(child.stderr.split('\n')[0]).toMatch(/^Unknown option '--frob'/)
  })
})
