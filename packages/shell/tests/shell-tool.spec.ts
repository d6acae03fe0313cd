import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ToolRegistry, type Tool } from '@dogu/core'
import { afterAll, describe, expect, it } from 'vitest'
import { apply, Config, createShellTool, ProcessTable, ShellError, shellPermission, type ProcessOutcome } from '../src'
import { fakeCall, killMarkedProcesses, processesMatching, sleepMarker } from './helpers'

const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-shell-')))
mkdirSync(join(workspace, 'sub'))
writeFileSync(join(workspace, 'sub', 'note.txt'), 'inside\n')
symlinkSync(tmpdir(), join(workspace, 'escape'))
symlinkSync('/etc', join(workspace, 'etc'))
symlinkSync('sub', join(workspace, 'inner'))
afterAll(() => rmSync(workspace, { recursive: true, force: true }))
afterAll(killMarkedProcesses)

type Output = { text: string; data: ProcessOutcome & { command: string; cwd: string } }
const run = (tool: Tool, args: object, call = fakeCall({ id: 's1' })) => tool.run(args as any, call) as Promise<Output>

describe('bash: working directory', () => {
  const tool = createShellTool({ workspace })

  it('runs in the workspace root, or in the session cwd inside it', async () => {
    expect((await run(tool, { command: 'pwd', timeout: 10_000 })).data.stdout.text).toBe(`${workspace}\n`)
    const inSub = await run(tool, { command: 'pwd', timeout: 10_000 }, fakeCall({ id: 's1', cwd: 'sub' }))
    expect(inSub.data).toMatchObject({ cwd: join(workspace, 'sub'), stdout: { text: `${join(workspace, 'sub')}\n` } })
  })

  it.each([
    ['..', 'CWD_OUTSIDE_WORKSPACE'],
    ['/', 'CWD_OUTSIDE_WORKSPACE'],
    ['escape', 'CWD_OUTSIDE_WORKSPACE'],
    ['missing', 'CWD_INVALID'],
  ] as const)('refuses cwd %j with %s', async (cwd, code) => {
    const error = await run(tool, { command: 'pwd', timeout: 10_000 }, fakeCall({ id: 's1', cwd })).catch((error) => error)
    expect(ShellError.is(error, code)).toBe(true)
  })
})

describe('bash: results', () => {
  it('reports the exit code and both streams as text and data', async () => {
    const tool = createShellTool({ workspace })
    const result = await run(tool, { command: 'echo out; echo err >&2; exit 2', timeout: 10_000 })
    expect(result.text).toMatch(/^Exit code 2 \([\d.]+s\)\.\n--- stdout ---\nout\n--- stderr ---\nerr$/)
    expect(result.data).toMatchObject({ status: 'exited', exitCode: 2, command: 'echo out; echo err >&2; exit 2' })
    expect((await run(tool, { command: 'true', timeout: 10_000 })).text).toMatch(/\n\(no output\)$/)
  })

  it('keeps only the head and the tail of long output and says how much is missing', async () => {
    const tool = createShellTool({ workspace, headBytes: 10, tailBytes: 10 })
    const result = await run(tool, { command: "printf 'start-----'; head -c 100000 /dev/zero | tr '\\0' x; printf '=====end'", timeout: 10_000 })
    expect(result.data.stdout).toEqual({ text: 'start-----\n[… 99998 bytes omitted …]\nxx=====end', bytes: 100018, omittedBytes: 99998 })
    expect(result.text).toContain('--- stdout (100018 bytes, 99998 omitted from the middle) ---')
  })

  it('streams output through call.progress', async () => {
    const tool = createShellTool({ workspace })
    const call = fakeCall({ id: 's1' })
    await run(tool, { command: 'echo one; echo two; echo three >&2', timeout: 10_000 }, call)
    // Each stream keeps its order; the two streams are not ordered against each other.
    expect(call.messages.join('').split('\n').filter((line) => line !== 'three')).toEqual(['one', 'two', ''])
    expect(call.messages.join('')).toContain('three\n')
  })

  it('reports timed_out with the output so far and leaves no process behind', async () => {
    const marker = sleepMarker()
    const tool = createShellTool({ workspace })
    const result = await run(tool, { command: `echo before; sleep ${marker} & sleep ${marker} & wait`, timeout: 300 })
    expect(result.data.status).toBe('timed_out')
    expect(result.text).toMatch(/^Timed out after 0\.3s: the command and everything it started were terminated\. Output so far:\n--- stdout ---\nbefore$/)
    expect(processesMatching(marker)).toEqual([])
  })

  it('terminates the group when the call is cancelled', async () => {
    const marker = sleepMarker()
    const tool = createShellTool({ workspace })
    const call = fakeCall({ id: 's1' }, (message) => { if (message.includes('ready')) call.controller.abort() })
    const result = await run(tool, { command: `sh -c 'sleep ${marker} & sleep ${marker} & wait' & echo ready; wait`, timeout: 60_000 }, call)
    expect(result.data.status).toBe('cancelled')
    expect(processesMatching(marker)).toEqual([])
  })

  it('starts nothing when the call is cancelled before it starts', async () => {
    const call = fakeCall({ id: 's1' })
    call.controller.abort()
    const result = await run(createShellTool({ workspace }), { command: 'touch made-by-cancelled-call', timeout: 10_000 }, call)
    expect(result.data).toMatchObject({ status: 'cancelled', exitCode: null, stdout: { bytes: 0 }, stderr: { bytes: 0 } })
    expect(result.data.pid).toBeUndefined()
    expect(result.text).toBe('Cancelled before the command started.\n(no output)')
    expect(existsSync(join(workspace, 'made-by-cancelled-call'))).toBe(false)
  })

  it('terminates the group when the call is cancelled while the process is being set up', async () => {
    const marker = sleepMarker()
    const call = fakeCall({ id: 's1' })
    // Aborts at the last await before the tool listens for the abort.
    const processes = new ProcessTable({ setUpStep: (step) => { if (step === 'spawned') call.controller.abort() } })
    const result = await run(createShellTool({ workspace, processes }), { command: `sleep ${marker}`, timeout: 60_000 }, call)
    expect(result.data).toMatchObject({ status: 'cancelled', exitCode: null })
    expect(result.text).toMatch(/^Cancelled: the command and everything it started were terminated\./)
    expect(() => process.kill(result.data.pid!, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }))
    expect(processesMatching(marker)).toEqual([])
    expect(processes.size).toBe(0)
  }, 10_000)

  it('throws SPAWN_FAILED when the shell is missing', async () => {
    const tool = createShellTool({ workspace, shell: '/nonexistent/bash' })
    const error = await run(tool, { command: 'true', timeout: 10_000 }).catch((error) => error)
    expect(ShellError.is(error, 'SPAWN_FAILED')).toBe(true)
  })

  // Throughput and memory under a flood are measured by `yarn bench shell`; what holds by
  // construction is checked here: fixed head and tail, size-capped progress messages.
  it('keeps a fixed head and tail of megabytes of output and caps each progress message', async () => {
    const MB = 1024 * 1024
    const tool = createShellTool({ workspace })
    const call = fakeCall({ id: 's1' })
    const result = await run(tool, { command: `head -c ${8 * MB} /dev/zero | tr '\\0' y`, timeout: 60_000 }, call)
    expect(result.data).toMatchObject({ status: 'exited', exitCode: 0, stdout: { bytes: 8 * MB, omittedBytes: 8 * MB - 2 * 16384 } })
    expect(result.data.stdout.text).toBe(`${'y'.repeat(16384)}\n[… ${8 * MB - 2 * 16384} bytes omitted …]\n${'y'.repeat(16384)}`)
    expect(call.messages.join('')).toMatch(/^y+/)
    for (const message of call.messages) expect(message.replace(/\n\[… \d+ bytes not shown …\]\n$/, '').length).toBeLessThanOrEqual(4096)
  })
})

describe('bash: permission', () => {
  it('names the permission `shell` with the command line as target and a per-call effect', () => {
    expect(shellPermission('  git status ')).toEqual({ name: 'shell', target: 'git status', effect: 'read', sandboxed: false })
    expect(shellPermission('cat x > y')).toEqual({
      name: 'shell',
      target: 'cat x > y',
      effect: 'exec',
      reason: 'it uses redirection `>`; apparent effects: writes "y" (redirection >)',
      sandboxed: false,
    })
    const tool = createShellTool({ workspace, sandbox: { mode: 'off' } })
    expect(tool.permission!({ command: 'ls -la', timeout: 1 } as any, fakeCall({ id: 's1' }))).toEqual({ name: 'shell', target: 'ls -la', effect: 'read', sandboxed: false })
    expect(tool.traits).toMatchObject({ effect: 'exec', parallel: false, background: false })
  })

  it('runs read-only commands and denies the rest when no permission service is loaded', async () => {
    const registry = new ToolRegistry()
    registry.define(createShellTool({ workspace }))
    const toolset = registry.toolset({ session: { id: 's1' } })
    const [read, exec] = await toolset.execute([
      { id: 'a', name: 'bash', arguments: { command: 'echo hi | wc -c' } },
      { id: 'b', name: 'bash', arguments: { command: 'touch made-by-test' } },
    ])
    expect(read).toMatchObject({ status: 'ok', data: { status: 'exited', exitCode: 0, stdout: { text: '3\n' } } })
    expect(exec).toMatchObject({ status: 'denied', code: 'no_permission_service' })
    expect(processesMatching('made-by-test')).toEqual([])
  })

  it('judges path operands through symbolic links: a link out of the workspace is not a read', async () => {
    // The classifier's judgement; a sandboxed call's effect is tested in sandbox.spec.ts.
    const tool = createShellTool({ workspace, sandbox: { mode: 'off' } })
    const permission = (command: string, cwd?: string) => tool.permission!({ command, timeout: 1 } as any, fakeCall({ id: 's1', cwd }))
    expect(permission('cat etc/hostname')).toEqual({
      name: 'shell',
      target: 'cat etc/hostname',
      effect: 'exec',
      reason: '`etc/hostname` leads outside the workspace through a symbolic link',
      sandboxed: false,
    })
    expect(permission('cat inner/note.txt')).toEqual({ name: 'shell', target: 'cat inner/note.txt', effect: 'read', sandboxed: false })
    expect(permission('cat note.txt', 'inner')).toEqual({ name: 'shell', target: 'cat note.txt', effect: 'read', sandboxed: false })
    expect(permission('cat hostname', 'sub/../etc').effect).toBe('exec')

    const registry = new ToolRegistry()
    registry.define(tool)
    const results = await registry.toolset({ session: { id: 's1' } }).execute([
      { id: 'a', name: 'bash', arguments: { command: 'cat etc/hostname' } },
      { id: 'b', name: 'bash', arguments: { command: 'cat /etc/hostname' } },
      { id: 'c', name: 'bash', arguments: { command: 'ls etc' } },
      { id: 'd', name: 'bash', arguments: { command: 'cat inner/note.txt' } },
    ])
    expect(results.map((result) => [result.status, result.code])).toEqual([
      ['denied', 'no_permission_service'],
      ['denied', 'no_permission_service'],
      ['denied', 'no_permission_service'],
      ['ok', undefined],
    ])
    expect(results[3]).toMatchObject({ data: { status: 'exited', exitCode: 0, stdout: { text: 'inside\n' } } })
  })

  it('rejects a timeout above the maximum before running anything', async () => {
    const registry = new ToolRegistry()
    registry.define(createShellTool({ workspace, maxTimeout: 5000 }))
    const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'a', name: 'bash', arguments: { command: 'ls', timeout: 6000 } }])
    expect(result).toMatchObject({ status: 'error', code: 'invalid_arguments' })
  })
})

describe('bash: plugin', () => {
  function host() {
    const defined: Tool[] = []
    const effects: { label?: string; dispose: () => unknown }[] = []
    let undefines = 0
    return {
      defined,
      effects,
      get undefines() { return undefines },
      tools: { define: (tool: Tool) => { defined.push(tool); return () => { undefines++ } } },
      effect: (execute: () => () => unknown, label?: string) => { effects.push({ label, dispose: execute() }) },
    }
  }

  it('registers bash with the config and kills running commands on disposal', async () => {
    const ctx = host()
    apply(ctx, Config({ workspace, killGrace: 500 }))
    expect(ctx.defined.map((tool) => tool.name)).toEqual(['bash'])
    expect(ctx.effects.map((effect) => effect.label)).toEqual(['bash: terminate running commands'])
    const marker = sleepMarker()
    let ready!: () => void
    const started = new Promise<void>((resolve) => { ready = resolve })
    const call = fakeCall({ id: 's1' }, (message) => { if (message.includes('ready')) ready() })
    const running = run(ctx.defined[0], { command: `sleep ${marker} & sh -c 'sleep ${marker}' & echo ready; wait`, timeout: 60_000 }, call)
    await started
    // The shell, both sleeps and the inner sh.
    expect(processesMatching(marker).length).toBeGreaterThanOrEqual(3)
    await ctx.effects[0].dispose()
    expect(processesMatching(marker)).toEqual([])
    expect((await running).data.status).toBe('cancelled')
    // A second dispose is harmless; the tool refuses new commands.
    await ctx.effects[0].dispose()
    const error = await run(ctx.defined[0], { command: 'true', timeout: 1000 }).catch((error) => error)
    expect(ShellError.is(error, 'DISPOSED')).toBe(true)
  })

  it('fills config defaults', () => {
    expect(Config({ workspace: '/w' })).toEqual({
      workspace: '/w', shell: 'bash', timeout: 120_000, maxTimeout: 600_000, headBytes: 16384, tailBytes: 16384, killGrace: 2000, env: {}, protected: ['.git', '.env', '.env.*'],
      sandbox: {
        mode: 'auto', network: 'none', writable: [], hidden: [], home: 'hidden', env: 'scrub', bwrapPath: 'bwrap',
        limits: { processes: 256, fileSize: 1024 ** 3, cpuTime: 600, addressSpace: 4 * 1024 ** 3, tmpSize: 512 * 1024 ** 2, memory: 1024 ** 3 },
      },
    })
  })

  it('shares one process table between tools when given one', async () => {
    const processes = new ProcessTable()
    const tool = createShellTool({ workspace, processes })
    await processes.dispose()
    const error = await run(tool, { command: 'true', timeout: 1000 }).catch((error) => error)
    expect(ShellError.is(error, 'DISPOSED')).toBe(true)
  })
})

describe('bash: preview', () => {
  const MISSING = '/nonexistent/bwrap'
  const preview = (tool: Tool, args: object, call = fakeCall({ id: 's1' })) => tool.preview!(tool.args(args), call)
  const long = `for f in ${Array.from({ length: 200 }, (_, i) => `file-${i}.txt`).join(' ')}; do rm -f "$f"; done && echo done`

  it('gives the whole command line, never shortened, its working directory, and that it runs unsandboxed', async () => {
    const tool = createShellTool({ workspace, sandbox: { mode: 'off' } })
    expect(await preview(tool, { command: long })).toEqual({
      command: long,
      text: `in ${workspace}, not sandboxed (the sandbox is off): it runs directly on the host as the bot's user, with its network; stopped after 120 s`,
    })
    const unavailable = createShellTool({ workspace, sandbox: { bwrapPath: MISSING } })
    expect(await preview(unavailable, { command: 'make install', timeout: 2500 }, fakeCall({ id: 's1', cwd: 'sub' }))).toEqual({
      command: 'make install',
      text: `in ${join(workspace, 'sub')}, not sandboxed (the sandbox is unavailable: ${MISSING} was not found; Debian: apt-get install bubblewrap): it runs directly on the host as the bot's user, with its network; stopped after 2.5 s`,
    })
  })

  it('says how the sandbox confines it, and with what network', async () => {
    expect(createShellTool({ workspace }).description).toContain('- sandbox: full (bubblewrap)')
    expect((await preview(createShellTool({ workspace }), { command: 'npm test' }))!.text)
      .toBe(`in ${workspace}, sandboxed (bubblewrap), only the workspace and a private /tmp writable, no network; stopped after 120 s`)
    expect((await preview(createShellTool({ workspace, sandbox: { network: 'host' } }), { command: 'npm ci' }))!.text)
      .toBe(`in ${workspace}, sandboxed (bubblewrap), only the workspace and a private /tmp writable, the host's network; stopped after 120 s`)
    expect((await preview(createShellTool({ workspace, sandbox: { network: ['registry.npmjs.org', '*.github.com'] } }), { command: 'npm ci' }))!.text)
      .toBe(`in ${workspace}, sandboxed (bubblewrap), only the workspace and a private /tmp writable, network only to registry.npmjs.org, *.github.com (through a proxy); stopped after 120 s`)
    expect((await preview(createShellTool({ workspace }), { command: 'rm -rf build' }, fakeCall({ id: 's1' }, undefined, 'readOnly')))!.text)
      .toBe(`in ${workspace}, sandboxed (bubblewrap), the workspace read-only, no network; stopped after 120 s`)
  })

  it('a working directory the tool would refuse: the preview says so', async () => {
    const tool = createShellTool({ workspace, sandbox: { mode: 'off' } })
    expect(await preview(tool, { command: 'ls' }, fakeCall({ id: 's1', cwd: 'escape' }))).toEqual({
      command: 'ls',
      text: expect.stringMatching(/^bash will be refused \(CWD_OUTSIDE_WORKSPACE\): the working directory \S+ is outside the workspace /),
    })
  })

  it('reaches the person asked with the request; a command that only reads asks nobody', async () => {
    const { PermissionEngine } = await import('@dogu/core')
    const registry = new ToolRegistry()
    const engine = new PermissionEngine()
    registry.permissions = engine
    registry.define(createShellTool({ workspace, sandbox: { mode: 'off' } }))
    const previews: unknown[] = []
    engine.addAsker((request, { respond }) => {
      previews.push(request.preview)
      respond({ decision: 'deny', by: 'u1' })
    })
    const toolset = registry.toolset({ session: { id: 's1', userId: 'u1' } })
    const [denied] = await toolset.execute([{ id: 'c1', name: 'bash', arguments: { command: 'touch made-by-bash' } }])
    expect(denied.status).toBe('denied')
    expect(previews).toEqual([{ command: 'touch made-by-bash', text: `in ${workspace}, not sandboxed (the sandbox is off): it runs directly on the host as the bot's user, with its network; stopped after 120 s` }])
    expect(existsSync(join(workspace, 'made-by-bash'))).toBe(false)
    expect((await toolset.execute([{ id: 'c2', name: 'bash', arguments: { command: 'ls' } }]))[0].status).toBe('ok')
    expect(previews).toHaveLength(1)
  })
})
