// Issue 25, class 1: a command line classed `read` never runs code the model could have
// written. The model writes text files anywhere in the workspace but in the workspace's
// own `.git` (the fs tools protect it); each attack below builds what it would write, then
// asks `bash` for a git command. Real git (/usr/bin/git) runs in every test.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ToolRegistry } from '@dogu/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createShellTool, ProcessTable } from '../src'
import { readEnvironment } from '../src/read-environment'
import { fakeCall } from './helpers'
import { git, guardedShell, ran, requireProgram, tempDir, touch, writeFiles } from './attack-helpers'

const base = tempDir('dogu-git-attacks-')
afterAll(() => rmSync(base, { recursive: true, force: true }))
beforeAll(() => requireProgram('git', 'apt-get install -y git'))

const HEAD = 'ref: refs/heads/main\n'
const MISSING = '1111111111111111111111111111111111111111\n'
// A config that makes git fetch the missing HEAD commit from a "promisor" remote: for a
// path URL, git runs `uploadpack` locally through the shell. Text files only.
const lazyFetch = (marker: string, url: string) =>
  `[core]\n\trepositoryformatversion = 1\n[extensions]\n\tpartialClone = origin\n[remote "origin"]\n\turl = ${url}\n\tpromisor = true\n\tuploadpack = "${touch(marker)}; false"\n`
const fsmonitor = (marker: string) => `[core]\n\tfsmonitor = "${touch(marker)}; false"\n`
// The files git needs to take a directory for a repository.
const repositoryFiles = (dir: string, config: string) => ({
  [`${dir}HEAD`]: HEAD,
  [`${dir}refs/heads/main`]: MISSING,
  [`${dir}objects/info/keep`]: '',
  [`${dir}config`]: config,
})

/** An owner's repository in `ws` with one commit, and a tracked file changed since. */
function ownRepository(ws: string) {
  writeFiles(ws, { 'a.txt': 'one\n' })
  git(ws, 'init', '-q')
  git(ws, 'add', '.')
  git(ws, 'commit', '-qm', 'one')
  writeFiles(ws, { 'a.txt': 'one\ntwo\n' })
}

/** Plain git, as the host would run it without this tool: shows that the attack is real. */
function plainGit(cwd: string, command: string) {
  spawnSync('bash', ['-c', command], { cwd, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, encoding: 'utf8' })
}

interface Attack {
  name: string
  /** Builds the workspace as the owner and the model would; returns the session's cwd. */
  setup(ws: string, marker: string, outside: string): string | undefined
  command: string
  /** Whether git 2.39 runs the payload when nothing stands in the way. */
  firesWithPlainGit: boolean
}

const ATTACKS: Attack[] = [
  {
    name: 'the review\'s attack: the workspace shaped like a bare repository, core.fsmonitor in its config',
    setup(ws, marker) {
      writeFiles(ws, { HEAD, config: `[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = "${touch(marker)}; false"\n`, 'objects/info/keep': '', 'refs/heads/keep': '', 'a.txt': 'x\n' })
      return undefined
    },
    command: 'git status',
    // git 2.39 stops at "this operation must be run in a work tree"; newer ones may not.
    firesWithPlainGit: false,
  },
  {
    name: 'the workspace shaped like a bare repository whose config fetches missing objects',
    setup(ws, marker, outside) {
      writeFiles(ws, repositoryFiles('', lazyFetch(marker, outside)))
      return undefined
    },
    command: 'git log',
    firesWithPlainGit: true,
  },
  {
    name: 'a bare-shaped directory below the root, run from a directory inside it',
    setup(ws, marker, outside) {
      writeFiles(ws, { ...repositoryFiles('vendor/', lazyFetch(marker, outside)), 'vendor/src/x.txt': 'x\n' })
      return 'vendor/src'
    },
    command: 'git log --oneline -5',
    firesWithPlainGit: true,
  },
  {
    name: 'a nested repository sub/.git whose core.fsmonitor runs a command',
    setup(ws, marker) {
      writeFiles(ws, { ...repositoryFiles('sub/.git/', fsmonitor(marker)), 'sub/a.txt': 'x\n' })
      return 'sub'
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'a nested repository whose config fetches missing objects',
    setup(ws, marker, outside) {
      writeFiles(ws, repositoryFiles('sub/.git/', lazyFetch(marker, outside)))
      return 'sub'
    },
    command: 'git show',
    firesWithPlainGit: true,
  },
  {
    name: 'a gitfile sub/.git naming a repository the model wrote elsewhere in the workspace',
    setup(ws, marker, outside) {
      writeFiles(ws, { 'sub/.git': 'gitdir: ../store\n', ...repositoryFiles('store/', lazyFetch(marker, outside)) })
      return 'sub'
    },
    command: 'git log',
    firesWithPlainGit: true,
  },
  {
    name: 'the workspace\'s own .git is a symbolic link to a directory the model can write',
    setup(ws, marker) {
      ownRepository(ws)
      renameSync(join(ws, '.git'), join(ws, 'gitstore'))
      symlinkSync('gitstore', join(ws, '.git'))
      writeFiles(ws, { 'gitstore/config': `[core]\n\trepositoryformatversion = 0\n${fsmonitor(marker).slice(7)}` })
      return undefined
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'the workspace\'s own .git is a gitfile naming a directory the model can write',
    setup(ws, marker) {
      ownRepository(ws)
      renameSync(join(ws, '.git'), join(ws, 'gitstore'))
      writeFileSync(join(ws, '.git'), 'gitdir: gitstore\n')
      writeFiles(ws, { 'gitstore/config': `[core]\n\trepositoryformatversion = 0\n${fsmonitor(marker).slice(7)}` })
      return undefined
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'the own .git/config includes a file in the workspace, which the model writes',
    setup(ws, marker) {
      ownRepository(ws)
      git(ws, 'config', 'include.path', '../team.gitconfig')
      writeFiles(ws, { 'team.gitconfig': fsmonitor(marker) })
      return undefined
    },
    command: 'git status --short',
    firesWithPlainGit: true,
  },
  {
    name: 'the own .git/config is a symbolic link to a workspace file, which the model writes',
    setup(ws, marker) {
      ownRepository(ws)
      renameSync(join(ws, '.git/config'), join(ws, 'linked-config'))
      symlinkSync('../linked-config', join(ws, '.git/config'))
      writeFiles(ws, { 'linked-config': `[core]\n\trepositoryformatversion = 0\n${fsmonitor(marker).slice(7)}` })
      return undefined
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'a submodule whose gitfile the model rewrites to name a repository of its own',
    setup(ws, marker, outside) {
      submoduleRepository(ws, outside)
      writeFiles(ws, { 'sub/.git': 'gitdir: ../evil\n', ...repositoryFiles('evil/', fsmonitor(marker)) })
      return undefined
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'a submodule not checked out, in which the model writes a .git directory',
    setup(ws, marker, outside) {
      submoduleRepository(ws, outside)
      git(ws, 'submodule', '-q', 'deinit', '-f', 'sub')
      writeFiles(ws, repositoryFiles('sub/.git/', fsmonitor(marker)))
      return undefined
    },
    command: 'git status',
    firesWithPlainGit: true,
  },
  {
    name: 'the owner\'s config defines a diff driver the model points at with .gitattributes',
    setup(ws, marker) {
      ownRepository(ws)
      git(ws, 'config', 'diff.x.textconv', 'sh ./conv.sh')
      writeFiles(ws, { '.gitattributes': '* diff=x\n', 'conv.sh': `${touch(marker)}; cat "$1"\n` })
      return undefined
    },
    command: 'git diff',
    firesWithPlainGit: true,
  },
  {
    name: 'the owner\'s config defines a clean filter whose script the model writes',
    setup(ws, marker) {
      ownRepository(ws)
      git(ws, 'config', 'filter.x.clean', 'sh ./clean.sh')
      writeFiles(ws, { '.gitattributes': '* filter=x\n', 'clean.sh': `${touch(marker)}; cat\n` })
      return undefined
    },
    command: 'git diff --stat',
    firesWithPlainGit: true,
  },
  {
    name: 'the owner\'s config names an external diff whose script the model writes',
    setup(ws, marker) {
      ownRepository(ws)
      git(ws, 'config', 'diff.external', 'sh ./ext.sh')
      writeFiles(ws, { 'ext.sh': touch(marker) })
      return undefined
    },
    command: 'git diff',
    firesWithPlainGit: true,
  },
  {
    name: 'the owner\'s repository is a partial clone: reads fetch missing objects through a transport',
    setup(ws, marker, outside) {
      ownRepository(ws)
      git(ws, 'config', 'core.repositoryformatversion', '1')
      git(ws, 'config', 'extensions.partialClone', 'origin')
      git(ws, 'config', 'remote.origin.url', outside)
      git(ws, 'config', 'remote.origin.promisor', 'true')
      git(ws, 'config', 'remote.origin.uploadpack', `${touch(marker)}; false`)
      return undefined
    },
    command: `git cat-file -p ${MISSING.trim()}`,
    firesWithPlainGit: true,
  },
]

/** An owner's repository in `ws` with a submodule `sub` cloned from a repository outside. */
function submoduleRepository(ws: string, outside: string) {
  const upstream = join(outside, `upstream-${Math.random().toString(36).slice(2)}`)
  mkdirSync(upstream)
  git(upstream, 'init', '-q')
  git(upstream, 'commit', '-q', '--allow-empty', '-m', 'up')
  git(ws, 'init', '-q')
  git(ws, 'submodule', '-q', 'add', upstream, 'sub')
  git(ws, 'commit', '-qm', 'add sub')
}

let counter = 0
function scene() {
  const dir = join(base, `scene-${++counter}`)
  const ws = join(dir, 'ws')
  const outside = join(dir, 'outside')
  mkdirSync(ws, { recursive: true })
  mkdirSync(outside)
  return { ws, outside, marker: join(dir, 'PAYLOAD-RAN') }
}

describe('git: a repository the model could have written is not read', () => {
  it.each(ATTACKS)('$name: asks, and the payload never runs', async ({ setup, command, firesWithPlainGit }) => {
    const { ws, outside, marker } = scene()
    const cwd = setup(ws, marker, outside)
    if (firesWithPlainGit) {
      plainGit(join(ws, cwd ?? '.'), command)
      expect(ran(marker), 'the attack is real: plain git runs the payload').toBe(true)
      rmSync(marker)
    }
    const shell = guardedShell({ workspace: ws })
    try {
      const result = await shell.bash(command, cwd)
      expect(result.status).toBe('denied')
      expect(shell.asked).toEqual([command])
      expect(ran(marker)).toBe(false)
    } finally {
      await shell.dispose()
    }
  })

  it('asks for git in the own repository when trustWorkspaceGit is off (the model may write .git)', async () => {
    const { ws, marker } = scene()
    ownRepository(ws)
    writeFiles(ws, { '.git/config': `[core]\n\trepositoryformatversion = 0\n${fsmonitor(marker).slice(7)}` })
    const shell = guardedShell({ workspace: ws, trustWorkspaceGit: false })
    try {
      expect(await shell.bash('git status')).toMatchObject({ status: 'denied' })
      expect(shell.asked).toEqual(['git status'])
      expect(ran(marker)).toBe(false)
    } finally {
      await shell.dispose()
    }
  })

  it('runs git as a read in the workspace\'s own repository and in its checked-out submodules', async () => {
    const { ws, outside } = scene()
    submoduleRepository(ws, outside)
    writeFiles(ws, { 'a.txt': 'one\n' })
    git(ws, 'add', 'a.txt')
    git(ws, 'commit', '-qm', 'a')
    writeFiles(ws, { 'a.txt': 'one\ntwo\n' })
    const shell = guardedShell({ workspace: ws })
    try {
      const status = await shell.bash('git status --short')
      expect(status).toMatchObject({ status: 'ok', data: { exitCode: 0, stdout: { text: ' M a.txt\n' } } })
      expect(await shell.bash('git diff --stat')).toMatchObject({ status: 'ok', content: expect.stringContaining('a.txt | 1 +') })
      expect(await shell.bash('git log --oneline -1', 'sub')).toMatchObject({ status: 'ok', content: expect.stringContaining('up') })
      expect(shell.asked).toEqual([])
    } finally {
      await shell.dispose()
    }
  })

  it('runs git in a workspace without a repository as a read that finds none (no repository above is used)', async () => {
    const { ws } = scene()
    const shell = guardedShell({ workspace: ws })
    try {
      const result = await shell.bash('git status')
      expect(result).toMatchObject({ status: 'ok', content: expect.stringContaining('not a git repository') })
      expect(shell.asked).toEqual([])
    } finally {
      await shell.dispose()
    }
  })
})

describe('git: programs named by the owner\'s config that the read environment switches off', () => {
  // The owner's config names a file in the workspace; the model rewrites it (its mode stays).
  const OWNER: { name: string; config: [string, string]; file: string; command: string }[] = [
    { name: 'core.fsmonitor = ./fsmon.sh', config: ['core.fsmonitor', './fsmon.sh'], file: 'fsmon.sh', command: 'git status' },
    { name: 'core.hooksPath = hooks (husky), the model writes hooks/post-index-change', config: ['core.hooksPath', 'hooks'], file: 'hooks/post-index-change', command: 'git status' },
  ]

  it.each(OWNER)('$name: the read runs, the script does not', async ({ config, file, command }) => {
    const { ws, marker } = scene()
    ownRepository(ws)
    // Staged, so a.txt's content matches the index: a stat change alone then makes git
    // refresh the entry and write the index (which runs the hook) every time, not only when
    // the commit happened to land in a.txt's own second (a "racily clean" entry).
    git(ws, 'add', 'a.txt')
    git(ws, 'config', ...config)
    writeFiles(ws, { [file]: '#!/bin/sh\nexit 0\n' })
    chmodSync(join(ws, file), 0o755)
    // The model's write: the file keeps the owner's mode.
    writeFileSync(join(ws, file), `#!/bin/sh\n${touch(marker)}\n`)
    // A stat change git must notice, so that it refreshes and writes the index (and runs the
    // hook): an explicit mtime, not `touch`, which can land in the index's own second.
    utimesSync(join(ws, 'a.txt'), 1_000_000_000, 1_000_000_000)
    plainGit(ws, command)
    expect(ran(marker), 'the attack is real: plain git runs the script').toBe(true)
    rmSync(marker)
    utimesSync(join(ws, 'a.txt'), 1_100_000_000, 1_100_000_000)
    const shell = guardedShell({ workspace: ws })
    try {
      expect(await shell.bash(command)).toMatchObject({ status: 'ok', data: { exitCode: 0 } })
      expect(ran(marker)).toBe(false)
    } finally {
      await shell.dispose()
    }
  })
})

describe('git: the read environment holds when a repository appears after the check', () => {
  // What a file written between the permission check and the run could do: git under the
  // read environment, with no classifier in front of it.
  const LATE: { name: string; setup(ws: string, marker: string, outside: string): string; command: string }[] = [
    { name: 'a bare-shaped workspace that fetches missing objects', setup: (ws, marker, outside) => (writeFiles(ws, repositoryFiles('', lazyFetch(marker, outside))), '.'), command: 'git log' },
    { name: 'a nested repository with core.fsmonitor', setup: (ws, marker) => (writeFiles(ws, { ...repositoryFiles('sub/.git/', fsmonitor(marker)), 'sub/a.txt': 'x\n' }), 'sub'), command: 'git status' },
    { name: 'a nested repository that fetches missing objects', setup: (ws, marker, outside) => (writeFiles(ws, repositoryFiles('sub/.git/', lazyFetch(marker, outside))), 'sub'), command: 'git log' },
    {
      name: 'a submodule .git directory with core.fsmonitor, entered by git status',
      setup(ws, marker, outside) {
        submoduleRepository(ws, outside)
        git(ws, 'submodule', '-q', 'deinit', '-f', 'sub')
        writeFiles(ws, repositoryFiles('sub/.git/', fsmonitor(marker)))
        return '.'
      },
      command: 'git status',
    },
    {
      name: 'a submodule .git directory that fetches missing objects, entered by git status',
      setup(ws, marker, outside) {
        submoduleRepository(ws, outside)
        git(ws, 'submodule', '-q', 'deinit', '-f', 'sub')
        writeFiles(ws, repositoryFiles('sub/.git/', lazyFetch(marker, outside)))
        return '.'
      },
      command: 'git status',
    },
  ]

  it.each(LATE)('$name', ({ setup, command }) => {
    const { ws, outside, marker } = scene()
    const cwd = join(ws, setup(ws, marker, outside))
    plainGit(cwd, command)
    expect(ran(marker), 'the attack is real: plain git runs the payload').toBe(true)
    rmSync(marker)
    spawnSync('bash', ['-c', command], { cwd, env: readEnvironment(process.env, ws), encoding: 'utf8' })
    expect(ran(marker)).toBe(false)
  })

  it('asks when the command line stopped being read between the permission check and the run', async () => {
    const { ws, outside, marker } = scene()
    const processes = new ProcessTable()
    const tool = createShellTool({ workspace: ws, processes, sandbox: { mode: 'off' } })
    const asked: string[] = []
    const call = fakeCall({ id: 's1', cwd: 'sub' })
    call.ask = async (reason) => {
      asked.push(reason)
      throw new Error('denied by the test')
    }
    mkdirSync(join(ws, 'sub'))
    try {
      expect(tool.permission!({ command: 'git log', timeout: 10_000 } as any, call)).toMatchObject({ effect: 'read' })
      // Between the check and the run, a write lands.
      writeFiles(ws, repositoryFiles('sub/.git/', lazyFetch(marker, outside)))
      await expect(tool.run({ command: 'git log', timeout: 10_000 } as any, call)).rejects.toThrow('denied by the test')
      expect(asked).toEqual([expect.stringContaining('it was read-only when checked but is not now: `sub/.git` is a git repository inside the workspace')])
      expect(ran(marker)).toBe(false)
    } finally {
      await processes.dispose()
    }
  })
})

describe('the host environment: variables that would run what the model wrote are not passed to reads', () => {
  const ENV: { name: string; setup(ws: string, marker: string): Record<string, string>; command: string }[] = [
    {
      name: 'GIT_DIR and GIT_WORK_TREE naming a directory in the workspace',
      setup(ws, marker) {
        writeFiles(ws, { ...repositoryFiles('store/', fsmonitor(marker)), 'a.txt': 'x\n' })
        return { GIT_DIR: join(ws, 'store'), GIT_WORK_TREE: ws }
      },
      command: 'git status',
    },
    {
      name: 'GIT_CONFIG_COUNT setting core.fsmonitor to a workspace script',
      setup(ws, marker) {
        ownRepository(ws)
        writeFiles(ws, { 'mon.sh': touch(marker) })
        return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.fsmonitor', GIT_CONFIG_VALUE_0: 'sh ./mon.sh' }
      },
      command: 'git status',
    },
    {
      name: 'GIT_CONFIG_PARAMETERS setting core.fsmonitor to a workspace script',
      setup(ws, marker) {
        ownRepository(ws)
        writeFiles(ws, { 'mon.sh': touch(marker) })
        return { GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='sh ./mon.sh'` }
      },
      command: 'git status',
    },
    {
      name: 'GIT_EXTERNAL_DIFF naming a workspace script',
      setup(ws, marker) {
        ownRepository(ws)
        writeFiles(ws, { 'ext.sh': touch(marker) })
        return { GIT_EXTERNAL_DIFF: 'sh ./ext.sh' }
      },
      command: 'git diff',
    },
    {
      name: 'GIT_CONFIG_GLOBAL naming a workspace file',
      setup(ws, marker) {
        ownRepository(ws)
        writeFiles(ws, { 'home.gitconfig': fsmonitor(marker) })
        return { GIT_CONFIG_GLOBAL: join(ws, 'home.gitconfig') }
      },
      command: 'git status',
    },
    {
      name: 'HOME inside the workspace, the model writes ~/.gitconfig',
      setup(ws, marker) {
        ownRepository(ws)
        writeFiles(ws, { 'home/.gitconfig': fsmonitor(marker) })
        return { HOME: join(ws, 'home') }
      },
      command: 'git status',
    },
    {
      name: 'BASH_ENV naming a workspace file (bash -c runs it first)',
      setup(ws, marker) {
        writeFiles(ws, { 'env.sh': touch(marker) })
        return { BASH_ENV: join(ws, 'env.sh') }
      },
      command: 'echo hi',
    },
    {
      name: 'RIPGREP_CONFIG_PATH naming a workspace file with --pre=sh',
      setup(ws, marker) {
        writeFiles(ws, { '.ripgreprc': '--pre=sh\n', 'notes.txt': `${touch(marker)}\n` })
        return { RIPGREP_CONFIG_PATH: join(ws, '.ripgreprc') }
      },
      command: 'rg x .',
    },
    {
      name: 'PATH with a workspace directory holding an `ls` the model rewrote',
      setup(ws, marker) {
        writeFiles(ws, { 'bin/ls': '#!/bin/sh\n' })
        chmodSync(join(ws, 'bin/ls'), 0o755)
        writeFileSync(join(ws, 'bin/ls'), `#!/bin/sh\n${touch(marker)}\n`)
        return { PATH: `${join(ws, 'bin')}:${process.env.PATH}` }
      },
      command: 'ls',
    },
    {
      name: 'PATH with a relative entry (the working directory)',
      setup(ws, marker) {
        writeFiles(ws, { 'ls': '#!/bin/sh\n' })
        chmodSync(join(ws, 'ls'), 0o755)
        writeFileSync(join(ws, 'ls'), `#!/bin/sh\n${touch(marker)}\n`)
        return { PATH: `.:${process.env.PATH}` }
      },
      command: 'ls',
    },
    {
      name: 'an exported shell function that sources a workspace file',
      setup(ws, marker) {
        writeFiles(ws, { 'helper.sh': touch(marker) })
        return { 'BASH_FUNC_ls%%': `() { . ${join(ws, 'helper.sh')}; }` }
      },
      command: 'ls',
    },
  ]

  beforeAll(() => requireProgram('rg', 'apt-get install -y ripgrep'))

  it.each(ENV)('$name: the read runs without it, the payload does not', async ({ setup, command }) => {
    const { ws, marker } = scene()
    const env = setup(ws, marker)
    spawnSync('bash', ['-c', command], { cwd: ws, env: { ...process.env, ...env }, encoding: 'utf8' })
    expect(ran(marker), 'the attack is real: with this environment the payload runs').toBe(true)
    rmSync(marker)
    const processes = new ProcessTable()
    const registry = new ToolRegistry()
    registry.define(createShellTool({ workspace: ws, env, processes, sandbox: { mode: 'off', env: 'inherit' } }))
    try {
      const [result] = await registry.toolset({ session: { id: 's1' } }).execute([{ id: 'c1', name: 'bash', arguments: { command } }])
      // No permission service: only a read runs at all.
      expect(result.status).toBe('ok')
      expect(ran(marker)).toBe(false)
    } finally {
      await processes.dispose()
    }
  })
})
