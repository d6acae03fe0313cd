import Dogu, { ToolService } from '@dogu/cordis'
import type { AskAnswer, AuthorizeRequest, PermissionGate, PermissionRequest, Session } from '@dogu/core'
import { Context, type Fiber } from 'cordis'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import * as Notes from '../src'

const alice = { id: 'alice' }
const bob = { id: 'bob' }

/** A gate that records every request and answers with `decision`. */
function testGate(decision: 'allow' | 'deny' = 'allow') {
  const log: string[] = []
  const gate: PermissionGate = {
    authorize(request: AuthorizeRequest) {
      log.push(`${request.session.id} ${request.permission.name}:${request.permission.target} ${request.effect}`)
      return decision === 'allow' ? { decision } : { decision, reason: 'notes are read-only here' }
    },
    approve: async () => ({ decision: 'deny', reason: 'nobody is asked in tests' }),
  }
  return { gate, log }
}

// Fibers a test loaded, disposed (awaited: the notes and grant stores flush) before its
// temp dirs are removed.
const loaded: Fiber[] = []
const dirs: string[] = []
async function tempDir() {
  const dir = await mkdtemp(join(tmpdir(), 'dogu-notes-'))
  dirs.push(dir)
  return dir
}
afterEach(async () => {
  for (const fiber of loaded.splice(0).reverse()) await fiber.dispose()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/**
 * The notes plugin on ToolService alone (no permissions service: a test may set a gate on
 * the registry); with `dogu`, on the default plugin, its stores in a temp dir.
 */
async function setup(config?: Partial<Notes.Config>, { dogu = false } = {}) {
  const ctx = new Context()
  guardLogs(ctx)
  const errors: unknown[] = []
  const warnings: string[] = []
  ctx.on('internal/error', (error) => { errors.push(error) })
  ctx.on('internal/warn', (format: string, ...args: unknown[]) => { warnings.push([format, ...args].join(' | ')) })
  if (dogu) {
    const dir = await tempDir()
    loaded.push(await ctx.plugin(Dogu, {
      audit: { storePath: join(dir, 'audit.jsonl') }, permissions: { storePath: join(dir, 'permissions.json') },
      background: { storePath: join(dir, 'background.json') },
    }))
  } else {
    loaded.push(await ctx.plugin(ToolService))
  }
  const fiber = await ctx.plugin(Notes, config)
  loaded.push(fiber)
  let n = 0
  const call = async (session: Session, args: Record<string, unknown>) => {
    const [result] = await ctx.tools.toolset({ session }).execute([{ id: `c${++n}`, name: 'notes', arguments: JSON.stringify(args) }])
    return result
  }
  return { ctx, fiber, call, errors, warnings }
}

describe('notes without a permissions service', () => {
  it('denies adding, saying why, and still lists', async () => {
    const { ctx, call } = await setup()
    expect(ctx.get('permissions')).toBeUndefined()
    expect(await call(alice, { action: 'add', text: 'buy milk' })).toMatchObject({
      status: 'denied',
      code: 'no_permission_service',
      content: 'Permission denied: no permission service is loaded, so only read-only tools may run ("notes" has effect "write").',
    })
    expect(await call(alice, { action: 'list' })).toMatchObject({ status: 'ok', content: 'No notes yet.', data: [] })
  })
})

describe('notes with a gate that allows', () => {
  it('adds, lists and deletes notes, per session', async () => {
    const { ctx, call } = await setup()
    const { gate, log } = testGate()
    ctx.tools.registry.permissions = gate
    expect((await call(alice, { action: 'add', text: 'buy milk' })).content).toBe('Added note #1.')
    expect((await call(alice, { action: 'add', text: 'call mom', id: null })).content).toBe('Added note #2.')
    expect((await call(bob, { action: 'add', text: 'water plants' })).content).toBe('Added note #1.')
    expect((await call(alice, { action: 'list' })).content).toBe('#1 buy milk\n#2 call mom')
    expect((await call(alice, { action: 'delete', id: 1 })).content).toBe('Deleted note #1.')
    expect((await call(alice, { action: 'add', text: 'pay rent' })).content).toBe('Added note #3.')
    expect((await call(alice, { action: 'list' })).content).toBe('#2 call mom\n#3 pay rent')
    expect((await call(bob, { action: 'list' })).content).toBe('#1 water plants')
    expect(log).toEqual([
      'alice notes:add write',
      'alice notes:add write',
      'bob notes:add write',
      'alice notes:list read',
      'alice notes:delete write',
      'alice notes:add write',
      'alice notes:list read',
      'bob notes:list read',
    ])
  })

  it('reports what is missing or wrong as a tool error the model can read', async () => {
    const { ctx, call } = await setup()
    ctx.tools.registry.permissions = testGate().gate
    expect(await call(alice, { action: 'add' })).toMatchObject({
      status: 'error',
      code: 'tool_error',
      content: 'Error: "add" needs a text: { "action": "add", "text": "..." }',
    })
    expect(await call(alice, { action: 'delete' })).toMatchObject({
      status: 'error',
      content: 'Error: "delete" needs the note id: { "action": "delete", "id": 1 }',
    })
    expect(await call(alice, { action: 'delete', id: 9 })).toMatchObject({ status: 'error', content: 'Error: there is no note #9 in this session' })
    expect(await call(alice, { action: 'edit' })).toMatchObject({
      status: 'error',
      code: 'invalid_arguments',
      content: 'Invalid arguments:\n- $.action: must be one of "add", "list", "delete" (got "edit")',
    })
  })

  it('stops at maxNotes per session', async () => {
    const { ctx, call } = await setup({ maxNotes: 1 })
    ctx.tools.registry.permissions = testGate().gate
    await call(alice, { action: 'add', text: 'one' })
    expect(await call(alice, { action: 'add', text: 'two' })).toMatchObject({
      status: 'error',
      content: 'Error: this session already has 1 notes, the most allowed; delete one first',
    })
    expect((await call(bob, { action: 'add', text: 'two' })).status).toBe('ok')
  })

  it('changes nothing when the gate denies', async () => {
    const { ctx, call } = await setup()
    ctx.tools.registry.permissions = testGate('deny').gate
    expect(await call(alice, { action: 'add', text: 'x' })).toMatchObject({
      status: 'denied',
      code: 'permission_denied',
      content: 'Permission denied: notes are read-only here',
    })
  })
})

describe('notes through the default plugin\'s permissions service', () => {
  // The caller is a user: by default the calling user may answer their own request.
  const carol: Session = { id: 'chat-1', userId: 'carol' }

  /** An asker that records each request and answers it with `answer`, as the caller. */
  function answering(ctx: Context, answer: (request: PermissionRequest) => Omit<AskAnswer, 'by'>) {
    const asked: string[] = []
    ctx.permissions.asker((request) => {
      asked.push(`${request.session.id} ${request.permission.name}:${request.permission.target} ${request.effect}`)
      return { ...answer(request), by: request.session.userId! }
    })
    return asked
  }

  it('asks before a write; an allow from the caller lets it through, a list is not asked', async () => {
    const { ctx, call } = await setup(undefined, { dogu: true })
    expect(ctx.tools.registry.permissions).toBe(ctx.permissions.engine)
    const asked = answering(ctx, () => ({ decision: 'allow' }))
    expect(await call(carol, { action: 'add', text: 'buy milk' })).toMatchObject({ status: 'ok', content: 'Added note #1.' })
    expect(await call(carol, { action: 'list' })).toMatchObject({ status: 'ok', content: '#1 buy milk' })
    // `once` is the default scope: the next write is asked again.
    expect(await call(carol, { action: 'delete', id: 1 })).toMatchObject({ status: 'ok', content: 'Deleted note #1.' })
    expect(asked).toEqual(['chat-1 notes:add write', 'chat-1 notes:delete write'])
    expect(ctx.permissions.grants()).toEqual([])
  })

  it('changes nothing when the caller denies', async () => {
    const { ctx, call } = await setup(undefined, { dogu: true })
    const asked = answering(ctx, () => ({ decision: 'deny', reason: 'not now' }))
    const result = await call(carol, { action: 'add', text: 'x' })
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(result.content).toContain('not now')
    expect(asked).toEqual(['chat-1 notes:add write'])
    expect(await call(carol, { action: 'list' })).toMatchObject({ status: 'ok', content: 'No notes yet.', data: [] })
  })

  it('ignores an answer from someone other than the caller, and waits for the caller', async () => {
    const { ctx, call, warnings } = await setup(undefined, { dogu: true })
    guardLogs(ctx).expect(/^\[PermissionService\] ignored an answer from mallory to permission request perm_\S+ \(notes\(action=add, text="buy milk"\) — notes "add"\): only the caller \(carol\)/)
    const replies: string[] = []
    ctx.permissions.asker((request, { respond }) => {
      replies.push(respond({ decision: 'allow', by: 'mallory' }))
      replies.push(respond({ decision: 'allow', by: request.session.userId! }))
    })
    expect(await call(carol, { action: 'add', text: 'buy milk' })).toMatchObject({ status: 'ok', content: 'Added note #1.' })
    expect(replies).toEqual(['not-allowed', 'accepted'])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('mallory')
  })

  it('denies a write when no asker is registered', async () => {
    const { call } = await setup(undefined, { dogu: true })
    const result = await call(carol, { action: 'add', text: 'x' })
    expect(result).toMatchObject({ status: 'denied', code: 'permission_denied' })
    expect(result.content).toContain('no asker is registered')
    expect((await call(carol, { action: 'list' })).content).toBe('No notes yet.')
  })
})

describe('notes in a data folder', () => {
  it('keeps notes across a reload', async () => {
    const dataDir = await tempDir()
    const first = await setup({ dataDir })
    first.ctx.tools.registry.permissions = testGate().gate
    await first.call(alice, { action: 'add', text: 'persist me' })
    await first.fiber.dispose()
    const saved = JSON.parse(await readFile(join(dataDir, 'notes.json'), 'utf8'))
    expect(saved).toMatchObject({ version: 1, sessions: [['alice', [{ id: 1, text: 'persist me' }]]] })

    const second = await setup({ dataDir })
    expect((await second.call(alice, { action: 'list' })).content).toBe('#1 persist me')
  })

  it('refuses to load a corrupt file, and leaves it as it was', async () => {
    const dataDir = await tempDir()
    const file = join(dataDir, 'notes.json')
    await writeFile(file, '{"version":1,"sessions":{"__proto__":1}}')
    const ctx = new Context()
    guardLogs(ctx).expect(`[notes] NotesError: ${file} is not a notes file; fix or remove it`)
    const errors: unknown[] = []
    ctx.on('internal/error', (error) => { errors.push(error) })
    loaded.push(await ctx.plugin(ToolService))
    const error = await ctx.plugin(Notes, { dataDir }).then(() => undefined, (reason) => reason)
    expect(error).toBeInstanceOf(Notes.NotesError)
    expect(error).toMatchObject({ code: 'CORRUPT_FILE', message: `${file} is not a notes file; fix or remove it` })
    expect(ctx.tools.get('notes')).toBeUndefined()
    expect(await readFile(file, 'utf8')).toBe('{"version":1,"sessions":{"__proto__":1}}')
  })
})
