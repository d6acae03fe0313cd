import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import type { Session, Tool, ToolCall } from '@dogu/core'
import { expect } from 'vitest'
import { FsError } from '../src'

/** A temporary directory holding `root/` (the workspace) and whatever sits beside it. */
export interface Sandbox {
  base: string
  root: string
  cleanup(): Promise<void>
}

export async function sandbox(): Promise<Sandbox> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'dogu-fs-')))
  const root = join(base, 'root')
  await mkdir(root)
  return { base, root, cleanup: () => rm(base, { recursive: true, force: true }) }
}

/** Creates files (`content`), directories (a name ending in `/`, or `null`) and links (`{ link }`). */
export async function tree(dir: string, entries: Record<string, string | null | { link: string }>): Promise<void> {
  for (const [name, value] of Object.entries(entries)) {
    const path = join(dir, name)
    if (value === null || name.endsWith('/')) {
      await mkdir(path, { recursive: true })
    } else {
      await mkdir(dirname(path), { recursive: true })
      if (typeof value === 'string') await writeFile(path, value)
      else await symlink(value.link, path)
    }
  }
}

export interface FakeCall extends ToolCall {
  progressed: string[]
  controller: AbortController
}

export function fakeCall(session: Partial<Session> = {}, onProgress?: (message: string, call: FakeCall) => void): FakeCall {
  const controller = new AbortController()
  const call: FakeCall = {
    id: 'call-1',
    name: 'test',
    session: { id: 'session-1', ...session },
    signal: controller.signal,
    deadline: Date.now() + 60_000,
    mode: 'default',
    progressed: [],
    controller,
    progress(message) {
      call.progressed.push(message)
      onProgress?.(message, call)
    },
    ask: async () => {},
    elicit: async () => ({ action: 'cancel', reason: 'no one to ask in this test' }),
    log() {},
    deny(reason): never {
      throw new Error(reason)
    },
  }
  return call
}

export interface Output {
  text: string
  data?: any
  artifacts?: any[]
}

/** Validates and defaults the arguments as the pipeline would, then runs the tool. */
export async function invoke(tool: Tool, args: Record<string, unknown>, call: ToolCall = fakeCall()): Promise<Output> {
  const output = await tool.run(tool.args(args), { ...call, name: tool.name } as ToolCall)
  return output as Output
}

/** The FsError a promise rejects with; fails the test when it resolves or throws something else. */
export async function failure(promise: Promise<unknown>): Promise<FsError> {
  const error = await promise.then(() => undefined, (error) => error)
  expect(error, 'expected an FsError').toBeInstanceOf(FsError)
  return error as FsError
}

/**
 * The code reading `payload` must fail with in an empty workspace `root`, from POSIX lexical
 * resolution: the oracle the traversal cases and the traversal corpus are both held to.
 */
export function lexicalCode(payload: string, root: string): 'INVALID_PATH' | 'OUTSIDE_ROOT' | 'NOT_A_FILE' | 'NOT_FOUND' {
  if (!payload || payload.includes('\0')) return 'INVALID_PATH'
  const absolute = resolve(root, payload)
  if (absolute !== root && !absolute.startsWith(root + sep)) return 'OUTSIDE_ROOT'
  if (absolute.split(sep).some((name) => Buffer.byteLength(name) > 255)) return 'INVALID_PATH'
  if (absolute === root) return 'NOT_A_FILE'
  return 'NOT_FOUND'
}

/**
 * Writes `x` at a traversal `payload` into the empty workspace `root`: refused with `code`
 * (its lexical code; a directory path inside the root is INVALID_PATH), or created where
 * lexical resolution puts it. Empties the root again; says whether a file was created.
 */
export async function writeTraversal(write: Tool, root: string, payload: string, code: string): Promise<boolean> {
  const attempt = invoke(write, { path: payload, content: 'x' })
  let created = false
  if (code !== 'NOT_FOUND' || payload.endsWith('/')) {
    const error = await failure(attempt)
    expect([payload, error.code]).toEqual([payload, code === 'NOT_FOUND' ? 'INVALID_PATH' : code])
  } else {
    expect([payload, (await attempt).data.status]).toEqual([payload, 'created'])
    expect(await readFile(resolve(root, payload), 'utf8')).toBe('x')
    created = true
  }
  for (const name of await readdir(root)) await rm(join(root, name), { recursive: true, force: true })
  return created
}
