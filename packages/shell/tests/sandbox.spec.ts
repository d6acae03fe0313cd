import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PermissionMode, PermissionRule } from '@dogu/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apply, Config, createShellTool, ProcessTable, ShellError, type ShellToolOptions } from '../src'
import { detectSandbox } from '../src/detect-sandbox'
import { guardedShell } from './attack-helpers'
import { fakeCall, useScratchHome } from './helpers'

// These tests need bubblewrap that works here, as CI installs it (.ci/run); where it does
// not, the first test says why instead of every other test failing obscurely.
const MISSING = '/nonexistent/bwrap'
let root: string
let workspace: string
let outside: string

useScratchHome()

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-sandbox-')))
  workspace = join(root, 'data', 'workspace')
  outside = join(root, 'outside')
  mkdirSync(workspace, { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(root, 'data', 'grants.json'), '{"token":"QZX-GRANT-SECRET"}')
  writeFileSync(join(outside, 'kept.txt'), 'outside\n')
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

type Data = { sandbox: string; status: string; exitCode: number | null; stdout: { text: string }; stderr: { text: string } }
async function run(options: Partial<ShellToolOptions>, command: string, mode: PermissionMode = 'default') {
  const processes = new ProcessTable()
  try {
    const tool = createShellTool({ workspace, processes, ...options })
    const result = await tool.run({ command, timeout: 30_000 } as any, fakeCall({ id: 's1' }, undefined, mode)) as { text: string; data: Data }
    return result.data
  } finally {
    await processes.dispose()
  }
}

/** The bash tool, sandboxed by default, behind a real permission engine whose asker records each question and denies it. */
const guarded = (options: Partial<ShellToolOptions>, mode: PermissionMode, rules: PermissionRule[] = []) =>
  guardedShell({ workspace, sandbox: {}, ...options }, mode, rules)

describe('bash sandbox: detection and reporting', () => {
  it('finds bubblewrap working on this machine, and says so in the description and in data.sandbox', async () => {
    const tool = createShellTool({ workspace })
    expect(tool.description, 'bubblewrap must be installed and able to create namespaces (apt-get install bubblewrap)').toMatch(/^- sandbox: full \(bubblewrap\)/m)
    expect(tool.description).toMatch(/no network/)
    expect((await run({}, 'true')).sandbox).toBe('full')
  })

  it('a bwrap path that does not exist is "unavailable": auto runs unsandboxed and says why', async () => {
    const tool = createShellTool({ workspace, sandbox: { bwrapPath: MISSING } })
    expect(tool.description).toContain(`- sandbox: unavailable (${MISSING} was not found; Debian: apt-get install bubblewrap). Commands run directly on the host`)
    const data = await run({ sandbox: { bwrapPath: MISSING } }, `echo hi > ${outside}/auto-unsandboxed`)
    expect(data).toMatchObject({ sandbox: 'unavailable', status: 'exited', exitCode: 0 })
    expect(existsSync(join(outside, 'auto-unsandboxed')), 'unsandboxed, the write outside lands').toBe(true)
  })

  it('required with bubblewrap missing refuses every command, before anyone is asked, and nothing runs', async () => {
    const options = { sandbox: { mode: 'required', bwrapPath: MISSING } } as const
    expect(createShellTool({ workspace, ...options }).description).toContain('The owner requires it, so every command is refused.')
    const shell = guarded(options, 'trust')
    try {
      for (const command of ['ls', `touch ${workspace}/required-read`, `touch ${outside}/required-exec`]) {
        const result = await shell.bash(command)
        expect(result.status).toBe('error')
        expect(result.content).toContain('the sandbox is required (sandbox.mode: required) but unavailable')
      }
      expect(shell.asked).toEqual([])
      expect(existsSync(join(workspace, 'required-read')) || existsSync(join(outside, 'required-exec'))).toBe(false)
      // The host-free path refuses as well.
      const error = await run(options, `touch ${outside}/required-direct`).catch((error) => error)
      expect(ShellError.is(error, 'SANDBOX_REQUIRED')).toBe(true)
      expect(existsSync(join(outside, 'required-direct'))).toBe(false)
    } finally {
      await shell.dispose()
    }
  })

  it('off runs unsandboxed and reports "off"', async () => {
    const data = await run({ sandbox: { mode: 'off' } }, 'true')
    expect(data.sandbox).toBe('off')
    expect(createShellTool({ workspace, sandbox: { mode: 'off' } }).description).toMatch(/^- sandbox: off\./m)
  })

  it('rejects a malformed allowlist with the entry named', () => {
    expect(() => createShellTool({ workspace, sandbox: { network: ['api.example.com', 'http://x'] } })).toThrow(/sandbox\.network: .*http:\/\/x/)
  })
})

describe('bash sandbox: what a command sees', () => {
  it('confines writes to the workspace: the file lands inside, / and the outside are read-only', async () => {
    const data = await run({}, `echo in > made.txt; echo out > ${outside}/kept.txt; touch /etc/dogu-test`)
    expect(readFileSync(join(workspace, 'made.txt'), 'utf8')).toBe('in\n')
    expect(readFileSync(join(outside, 'kept.txt'), 'utf8')).toBe('outside\n')
    expect(data.stderr.text).toMatch(/Read-only file system/)
    expect(existsSync('/etc/dogu-test')).toBe(false)
  })

  it('hides the data directory but keeps the workspace inside it visible', async () => {
    const data = await run({ sandbox: { dataDir: join(root, 'data') } }, `cat ${root}/data/grants.json; ls ${root}/data; pwd`)
    expect(data.stdout.text).not.toContain('QZX-GRANT-SECRET')
    expect(data.stdout.text).toBe(`workspace\n${workspace}\n`)
  })

  it('the plugin hides its host\'s baseDir (Koishi\'s app folder)', async () => {
    let defined: any
    const disposers: (() => unknown)[] = []
    apply({ baseDir: join(root, 'data'), tools: { define: (tool) => { defined = tool; return () => {} } }, effect: (execute) => disposers.push(execute()) }, Config({ workspace }))
    try {
      const result = await defined.run({ command: `cat ${root}/data/grants.json`, timeout: 30_000 }, fakeCall({ id: 's1' }))
      expect(result.data.sandbox).toBe('full')
      expect(result.data.stdout.text).not.toContain('QZX-GRANT-SECRET')
    } finally {
      for (const dispose of disposers) await dispose()
    }
  })

  it('an extra writable path is writable; the private /tmp is not the host\'s', async () => {
    const extra = join(root, 'extra')
    mkdirSync(extra, { recursive: true })
    const marker = `dogu-private-tmp-${process.pid}`
    const data = await run({ sandbox: { writable: [extra] } }, `echo w > ${extra}/w.txt && echo t > /tmp/${marker} && cat /tmp/${marker}`)
    expect(data).toMatchObject({ exitCode: 0, stdout: { text: 't\n' } })
    expect(readFileSync(join(extra, 'w.txt'), 'utf8')).toBe('w\n')
    expect(existsSync(join('/tmp', marker))).toBe(false)
  })

  it('scrubs the environment by default, sandboxed or not; the plugin\'s env still reaches commands', async () => {
    process.env.DOGU_SANDBOX_SPEC_TOKEN = 'QZX-ENV-SECRET'
    try {
      for (const sandbox of [{}, { bwrapPath: MISSING }, { mode: 'off' as const }]) {
        const data = await run({ sandbox, env: { GIVEN: 'on-purpose' } }, 'env')
        expect(data.stdout.text).not.toContain('QZX-ENV-SECRET')
        expect(data.stdout.text).toContain('GIVEN=on-purpose')
        expect(data.stdout.text).toMatch(/^PATH=/m)
      }
      expect((await run({ sandbox: { env: 'inherit' } }, 'env')).stdout.text).toContain('QZX-ENV-SECRET')
    } finally {
      delete process.env.DOGU_SANDBOX_SPEC_TOKEN
    }
  })
})

describe('bash sandbox: network', () => {
  it('none: no Unix socket, no DNS, no loopback', async () => {
    const data = await run({}, `python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>&1 | tail -1; getent hosts localhost.localdomain example.com; echo dns=$?; (exec 3<>/dev/tcp/127.0.0.1/22) 2>&1 | tail -1`)
    expect(data.stdout.text).toMatch(/PermissionError: \[Errno 1\] Operation not permitted\ndns=2\n.*(Connection refused|Network is unreachable)/)
  })

  it('an allowlist: the proxy refuses other hosts, and a root bot\'s command still gets no Unix socket (its forwarder runs outside)', async () => {
    const tool = createShellTool({ workspace, sandbox: { network: ['api.example.test'] } })
    expect(tool.description).toContain('network only to api.example.test through HTTP(S)_PROXY')
    const processes = new ProcessTable()
    try {
      const command = `curl -sS -o /dev/null -w '%{http_code}\\n' http://other.example.test/ 2>&1; python3 -c "import socket; socket.socket(socket.AF_UNIX); print('unix socket opened')" 2>&1 | tail -1`
      const result = await createShellTool({ workspace, processes, sandbox: { network: ['api.example.test'] } }).run({ command, timeout: 30_000 } as any, fakeCall({ id: 's1' })) as any
      expect(result.data.network).toEqual({ allow: ['api.example.test'], refused: [{ host: 'other.example.test', reason: 'not in the network allowlist' }] })
      expect(result.data.stdout.text).toMatch(/^403\n/)
      // Unprivileged, the forwarder runs inside and needs Unix sockets (docs/shell-tool.md).
      if (process.getuid?.() === 0) expect(result.data.stdout.text).toMatch(/PermissionError/)
      else expect(result.data.stdout.text).toContain('unix socket opened')
    } finally {
      await processes.dispose()
    }
  })
})

describe('bash sandbox: permissions', () => {
  const permission = (options: Partial<ShellToolOptions>, command: string, mode: PermissionMode = 'default') =>
    createShellTool({ workspace, ...options }).permission!({ command, timeout: 1 } as any, fakeCall({ id: 's1' }, undefined, mode))

  it('carries `sandboxed`, and makes a sandboxed offline command a write (the workspace is all it can change)', () => {
    expect(permission({}, 'ls')).toMatchObject({ effect: 'read', sandboxed: true })
    expect(permission({}, 'touch x')).toMatchObject({ effect: 'write', sandboxed: true, reason: expect.stringContaining('it can change only the workspace') })
    expect(permission({ sandbox: { network: 'host' } }, 'touch x')).toMatchObject({ effect: 'exec', sandboxed: true })
    expect(permission({}, 'touch x', 'readOnly')).toMatchObject({ effect: 'read', sandboxed: true })
    expect(permission({ sandbox: { bwrapPath: MISSING } }, 'touch x')).toMatchObject({ effect: 'exec', sandboxed: false })
  })

  it('a `sandboxed: true` rule allows sandboxed commands without asking; unsandboxed ones are still asked', async () => {
    const rules: PermissionRule[] = [{ permission: 'shell', sandboxed: true, decision: 'allow' }]
    const sandboxed = guarded({}, 'default', rules)
    const unsandboxed = guarded({ sandbox: { bwrapPath: MISSING } }, 'default', rules)
    try {
      expect(await sandboxed.bash('touch by-rule.txt')).toMatchObject({ status: 'ok' })
      expect(existsSync(join(workspace, 'by-rule.txt'))).toBe(true)
      expect(sandboxed.asked).toEqual([])
      expect(await unsandboxed.bash('touch by-rule-unsandboxed.txt')).toMatchObject({ status: 'denied' })
      expect(unsandboxed.asked).toEqual(['touch by-rule-unsandboxed.txt'])
      expect(existsSync(join(workspace, 'by-rule-unsandboxed.txt'))).toBe(false)
    } finally {
      await sandboxed.dispose()
      await unsandboxed.dispose()
    }
  })

  it('deny rules still apply to sandboxed commands', async () => {
    const shell = guarded({}, 'trust', [{ permission: 'shell', sandboxed: true, decision: 'allow' }, { permission: 'shell', command: 'rm *', decision: 'deny' }])
    try {
      writeFileSync(join(workspace, 'keep-me.txt'), 'x')
      expect(await shell.bash('rm keep-me.txt')).toMatchObject({ status: 'denied' })
      expect(existsSync(join(workspace, 'keep-me.txt'))).toBe(true)
    } finally {
      await shell.dispose()
    }
  })

  it('readOnly mode runs sandboxed commands without asking, with the workspace read-only', async () => {
    writeFileSync(join(workspace, 'ro.txt'), 'before\n')
    const shell = guarded({}, 'readOnly')
    const unsandboxed = guarded({ sandbox: { bwrapPath: MISSING } }, 'readOnly')
    try {
      const result = await shell.bash('echo after > ro.txt; cat ro.txt')
      expect(result.status).toBe('ok')
      expect(result.data).toMatchObject({ sandbox: 'full', stdout: { text: 'before\n' }, stderr: { text: expect.stringMatching(/Read-only file system/) } })
      expect(readFileSync(join(workspace, 'ro.txt'), 'utf8')).toBe('before\n')
      expect(shell.asked).toEqual([])
      // Without the sandbox, readOnly denies what is not a read, as before.
      expect(await unsandboxed.bash('echo after > ro.txt')).toMatchObject({ status: 'denied' })
      expect(readFileSync(join(workspace, 'ro.txt'), 'utf8')).toBe('before\n')
    } finally {
      await shell.dispose()
      await unsandboxed.dispose()
    }
  })

  it('acceptEdits allows sandboxed commands with no network; with the host network they are asked', async () => {
    const offline = guarded({}, 'acceptEdits')
    const online = guarded({ sandbox: { network: 'host' } }, 'acceptEdits')
    try {
      expect(await offline.bash('echo e > edits.txt')).toMatchObject({ status: 'ok' })
      expect(readFileSync(join(workspace, 'edits.txt'), 'utf8')).toBe('e\n')
      expect(offline.asked).toEqual([])
      expect(await online.bash('echo e > edits-online.txt')).toMatchObject({ status: 'denied' })
      expect(online.asked).toEqual(['echo e > edits-online.txt'])
    } finally {
      await offline.dispose()
      await online.dispose()
    }
  })
})

describe('bash sandbox: protected paths, the home, the set-up (issue 43)', () => {
  it('acceptEdits and a `sandboxed: true` rule run `git config core.fsmonitor` unasked, and it fails on the read-only .git', async () => {
    const repo = join(workspace, 'guarded-repo')
    mkdirSync(repo, { recursive: true })
    execFileSync('git', ['init', '-q', repo])
    const config = readFileSync(join(repo, '.git/config'), 'utf8')
    const cases: [PermissionMode, PermissionRule[]][] = [['acceptEdits', []], ['default', [{ permission: 'shell', sandboxed: true, decision: 'allow' }]]]
    for (const [mode, rules] of cases) {
      const shell = guarded({}, mode, rules)
      try {
        const result = await shell.bash(`git config core.fsmonitor "touch ${outside}/fsmonitor-ran"; echo hook > .git/hooks/pre-commit`, 'guarded-repo')
        expect(result.status).toBe('ok')
        expect(result.content).toContain('Read-only file system')
        expect(shell.asked).toEqual([])
      } finally {
        await shell.dispose()
      }
    }
    expect(readFileSync(join(repo, '.git/config'), 'utf8')).toBe(config)
    expect(existsSync(join(repo, '.git/hooks/pre-commit'))).toBe(false)
  })

  it('where a protected path cannot be held read-only (a dangling .env link) the command is exec and unsandboxed, so acceptEdits asks', async () => {
    const dir = join(workspace, 'dangling')
    mkdirSync(dir, { recursive: true })
    symlinkSync('not-yet.env', join(dir, '.env'))
    const shell = guarded({}, 'acceptEdits')
    try {
      const tool = createShellTool({ workspace })
      const permission = await tool.permission!({ command: 'echo x > dangling/not-yet.env' } as never, fakeCall({ id: 's1' })) as { effect: string; sandboxed: boolean; reason: string }
      expect(permission).toMatchObject({ effect: 'exec', sandboxed: false })
      expect(permission.reason).toContain('`dangling/.env` is a link that leads nowhere')
      expect(await shell.bash('echo x > dangling/not-yet.env')).toMatchObject({ status: 'denied' })
      expect(shell.asked).toEqual(['echo x > dangling/not-yet.env'])
      expect(existsSync(join(dir, 'not-yet.env'))).toBe(false)
    } finally {
      await shell.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a `protected` list of the owner\'s own replaces the default, and trustWorkspaceGit follows whether it covers .git', async () => {
    mkdirSync(join(workspace, 'own'), { recursive: true })
    writeFileSync(join(workspace, 'own/secrets.yml'), 'owner\n')
    writeFileSync(join(workspace, 'own/.env'), 'owner\n')
    const data = await run({ protected: ['secrets.yml'] }, 'echo model > own/secrets.yml; echo model > own/.env')
    expect(data.stderr.text).toContain('own/secrets.yml: Read-only file system')
    expect(readFileSync(join(workspace, 'own/secrets.yml'), 'utf8')).toBe('owner\n')
    expect(readFileSync(join(workspace, 'own/.env'), 'utf8')).toBe('model\n')
    const git = (protectedPaths?: string[]) => createShellTool({ workspace, protected: protectedPaths }).permission!({ command: 'git status' } as never, fakeCall({ id: 's1' })) as { effect: string }
    execFileSync('git', ['init', '-q', workspace])
    try {
      expect(git().effect).toBe('read')
      expect(git(['secrets.yml']).effect).not.toBe('read')
    } finally {
      rmSync(join(workspace, '.git'), { recursive: true, force: true })
    }
  })

  it('a protected path created while another command runs is left and said so, and removed when that one ends', async () => {
    // A workspace of its own: a protected path deeper down (another test's) would make the
    // second set-up wait for the first command on this machine's bubblewrap (see the set-up gate).
    const own = join(root, 'concurrent-ws')
    const dir = join(own, 'concurrent')
    mkdirSync(dir, { recursive: true })
    const processes = new ProcessTable()
    const tool = createShellTool({ workspace: own, processes })
    const call = () => fakeCall({ id: 's1', cwd: 'concurrent' })
    try {
      const first = tool.run({ command: 'touch a-running; while [ ! -e release ]; do sleep 0.01; done', timeout: 30_000 } as never, call()) as Promise<{ text: string }>
      while (!existsSync(join(dir, 'a-running'))) await new Promise((resolve) => setTimeout(resolve, 10))
      const second = await tool.run({ command: 'echo X=1 > .env.local', timeout: 30_000 } as never, call()) as { text: string; data: { protectedCreated?: unknown } }
      expect(second.text).toContain('The command created protected paths that could not be removed while another command runs: concurrent/.env.local.')
      expect(second.data.protectedCreated).toEqual({ removed: [], left: ['concurrent/.env.local'] })
      expect(existsSync(join(dir, '.env.local'))).toBe(true)
      writeFileSync(join(dir, 'release'), '')
      expect((await first).text).toContain('Removed the protected paths the command created (protected paths are read-only to commands): concurrent/.env.local.')
      expect(existsSync(join(dir, '.env.local'))).toBe(false)
    } finally {
      writeFileSync(join(dir, 'release'), '')
      await processes.dispose()
    }
  })

  it('a set-up that waits for another sandboxed command gives up at its timeout or when cancelled, and nothing runs', async () => {
    // A protected path below the workspace's root (sub/.git): on a bubblewrap that follows
    // links, another set-up must wait while the first command could swap a folder on its way.
    const own = join(root, 'waiting-ws')
    mkdirSync(join(own, 'sub/.git'), { recursive: true })
    const processes = new ProcessTable()
    const tool = createShellTool({ workspace: own, processes })
    const support = detectSandbox()
    const follows = support.available && support.followsLinks
    try {
      const first = tool.run({ command: 'touch a-running; while [ ! -e release ]; do sleep 0.01; done', timeout: 30_000 } as never, fakeCall({ id: 's1' })) as Promise<unknown>
      while (!existsSync(join(own, 'a-running'))) await new Promise((resolve) => setTimeout(resolve, 10))
      const timedOut = tool.run({ command: 'touch ran-after-timeout', timeout: 200 } as never, fakeCall({ id: 's1' })) as Promise<unknown>
      const cancelledCall = fakeCall({ id: 's1' })
      const cancelled = tool.run({ command: 'touch ran-after-cancel', timeout: 30_000 } as never, cancelledCall) as Promise<unknown>
      if (follows) {
        await expect(timedOut).rejects.toSatisfy((error) => ShellError.is(error, 'SANDBOX_SETUP') && /the call's time ran out .*nothing ran/.test((error as Error).message))
        cancelledCall.controller.abort()
        await expect(cancelled).rejects.toSatisfy((error) => ShellError.is(error, 'SANDBOX_SETUP') && /cancelled while its sandbox waited .*nothing ran/.test((error as Error).message))
        expect(existsSync(join(own, 'ran-after-timeout'))).toBe(false)
        expect(existsSync(join(own, 'ran-after-cancel'))).toBe(false)
      } else {
        // A bubblewrap that does not follow links: nothing to wait for, both run at once.
        await Promise.all([timedOut, cancelled])
        expect(existsSync(join(own, 'ran-after-cancel'))).toBe(true)
      }
      writeFileSync(join(own, 'release'), '')
      await first
      // The turns given up were passed on: the next set-up is not stuck behind them.
      await tool.run({ command: 'touch ran-later', timeout: 30_000 } as never, fakeCall({ id: 's1' }))
      expect(existsSync(join(own, 'ran-later'))).toBe(true)
    } finally {
      writeFileSync(join(own, 'release'), '')
      await processes.dispose()
    }
  })

  it('refuses a `hidden` entry inside the workspace or a writable path, and says why', () => {
    for (const sandbox of [{ hidden: [join(workspace, '.local/share/keyrings')] }, { writable: [outside], hidden: [join(outside, 'keys')] }]) {
      let error: unknown
      try {
        createShellTool({ workspace, sandbox })
      } catch (caught) {
        error = caught
      }
      expect(ShellError.is(error, 'INVALID_OPTIONS')).toBe(true)
      expect((error as Error).message).toMatch(/sandbox\.hidden: .* lies inside (the workspace|a writable path), where a command can rename it and the next command reads it under another name/)
    }
  })

  it('empties the bot\'s home by default; home: visible hides only the credential paths, and the description says which', async () => {
    const token = join(homedir(), `.dogu-sandbox-spec-${process.pid}`)
    writeFileSync(token, 'QZX-HOME-TOKEN\n')
    try {
      const hidden = createShellTool({ workspace })
      expect(hidden.description).toContain(`the bot's home ${homedir()} is empty inside`)
      expect((await run({}, `cat ${token}; ls -A ~`)).stdout.text).toBe('')
      const visible = createShellTool({ workspace, sandbox: { home: 'visible' } })
      expect(visible.description).toContain('~/.bashrc and other files stay readable')
      expect((await run({ sandbox: { home: 'visible' } }, `cat ${token}`)).stdout.text).toBe('QZX-HOME-TOKEN\n')
    } finally {
      rmSync(token, { force: true })
    }
  })

  it('a workspace inside the home is bound back into the emptied home', async () => {
    const inHome = mkdtempSync(join(homedir(), '.dogu-ws-'))
    try {
      writeFileSync(join(inHome, 'kept.txt'), 'kept\n')
      const data = await run({ workspace: inHome }, 'cat kept.txt; echo new > new.txt; ls -A ~ | wc -l')
      expect(data.stdout.text).toBe('kept\n1\n')
      expect(readFileSync(join(inHome, 'new.txt'), 'utf8')).toBe('new\n')
    } finally {
      rmSync(inHome, { recursive: true, force: true })
    }
  })

  it('records what the start-up probe found of bubblewrap\'s set-up, and the description says it', () => {
    const support = detectSandbox()
    expect(support.available).toBe(true)
    // The same set-up, done here by hand: a link in the workspace to the host's root as
    // bubblewrap sees it (/oldroot), and a mount asked for through it.
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dogu-probe-spec-')))
    let follows: boolean
    try {
      mkdirSync(join(dir, 'ws'))
      mkdirSync(join(dir, 'target'))
      symlinkSync(`/oldroot${dir}/target`, join(dir, 'ws/link'))
      const uid = process.getuid?.() === 0 ? ['--uid', '1000', '--gid', '1000'] : []
      spawnSync('bwrap', ['--unshare-all', '--unshare-user', ...uid, '--ro-bind', '/', '/', '--bind', join(dir, 'ws'), join(dir, 'ws'), '--tmpfs', join(dir, 'ws/link/made'), '--', 'true'], { stdio: 'ignore' })
      follows = existsSync(join(dir, 'target/made'))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    expect(support.available && support.followsLinks).toBe(follows)
    const description = createShellTool({ workspace }).description
    if (follows) expect(description).toContain('This bubblewrap follows links while it sets up')
    else expect(description).not.toContain('follows links')
  })
})
