// Issue 25, item 11: a stdio server started through a wrapper (`sh -c …`, `npx …`) is a
// family of processes. Ending the connection ends all of it: the wrapper leads a process
// group of its own, and the whole group is signalled until it is gone.
//
// "Gone" is checked two ways. The leader is Dogu's child, which Dogu reaps: `kill(pgid, 0)`
// is ESRCH. The others are orphans once the leader dies, reaped by init, and an init that
// does not reap (this machine's does not) keeps them as zombies, which `kill(-pgid, 0)`
// still finds: so no live (non-zombie) member of the group may be left, read from /proc.
import { randomUUID } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardLogs } from '../../../test-support/log-guard'
import { McpClientConnection, McpClientPlugin, type McpServerConfig } from '../src'
import { doguApp } from './client-harness'

const FAMILY = resolve(import.meta.dirname, 'fixtures/family-server.mjs')

interface Family {
  wrapper: number
  server: number
  grandchild: number
  groups: number[]
}

/** `sh -c 'node family-server.mjs <marker>; exit $?'`: sh stays the parent (no exec), as npx does. */
function wrapped(marker: string): McpServerConfig {
  return { command: 'sh', args: ['-c', `"${process.execPath}" "${FAMILY}" ${marker}; exit $?`, 'sh'] }
}

/** Pids of every process whose command line carries `marker`, wherever it is in the process tree. */
async function carrying(marker: string): Promise<number[]> {
  const found: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const [cmdline, stat] = await Promise.all([readFile(`/proc/${entry}/cmdline`, 'utf8'), readFile(`/proc/${entry}/stat`, 'utf8')])
      // A zombie is dead already (its parent has not reaped it yet).
      if (cmdline.includes(marker) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** What `kill(pid, 0)` says: `ESRCH` once the process is gone and reaped. */
function probe(pid: number): string {
  try {
    process.kill(pid, 0)
    return 'alive'
  } catch (error) {
    return (error as NodeJS.ErrnoException).code!
  }
}

/** Live (non-zombie) members of process group `pgid`, from /proc. */
async function liveMembers(pgid: number): Promise<number[]> {
  const found: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** The group is gone: its leader reaped, no live member left. */
async function expectGone(pgid: number) {
  expect(probe(pgid)).toBe('ESRCH')
  expect(await liveMembers(pgid)).toEqual([])
}

async function family(ctx: Context): Promise<Family> {
  const [result] = await ctx.tools.execute([{ id: 'f', name: 'family_family', arguments: {} }], { session: { id: 's' } })
  expect(result.status).toBe('ok')
  return result.data as Family
}

// Linux: the checks read /proc.
describe('a wrapped stdio server: disposal ends its whole process group', () => {
  let dir: string
  let ctx: Context
  let marker: string
  const strays: number[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dogu-mcp-group-'))
    ctx = await doguApp(dir, [{ permission: 'tool:family_*', decision: 'allow' }])
    marker = `dogu-family-${randomUUID()}`
  })
  afterEach(async () => {
    // Whatever a failed test left behind does not outlive it.
    for (const pid of [...strays.splice(0), ...await carrying(marker)]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {}
    }
    await ctx.fiber.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  const connect = (server: McpServerConfig) => {
    const logger = { debug() {}, warn: (format: string, ...args: unknown[]) => ctx.emit(ctx, 'internal/warn', format, ...args) }
    const connection = new McpClientConnection({ name: 'family', server, define: (tool) => ctx.tools.define(tool), logger, reconnect: { initialDelay: 10, maxDelay: 100 }, killGrace: 200 })
    connection.start()
    return connection
  }

  it('the attack is real: with only the direct child signalled (the SDK\'s own transport), the grandchild survives', async () => {
    const client = new Client({ name: 'probe', version: '1' })
    const transport = new StdioClientTransport({ ...wrapped(marker), stderr: 'ignore' } as never)
    await client.connect(transport)
    const result = await client.callTool({ name: 'family', arguments: {} })
    const { grandchild } = result.structuredContent as unknown as Family
    strays.push(grandchild)
    await client.close()
    expect(await carrying(marker)).toContain(grandchild)
  })

  it('close ends the wrapper, the server and the grandchild that ignores SIGTERM', async () => {
    const connection = connect(wrapped(marker))
    await connection.connected(AbortSignal.timeout(20_000))
    const pgid = connection.pid!
    const { wrapper, server, grandchild, groups } = await family(ctx)
    // The wrapper leads the group; the server and its child are in it.
    expect(wrapper).toBe(pgid)
    expect(groups).toEqual([pgid, pgid, pgid])
    expect(await carrying(marker)).toEqual(expect.arrayContaining([wrapper, server, grandchild]))

    expect(await liveMembers(pgid)).toEqual(expect.arrayContaining([wrapper, server, grandchild]))

    await connection.close()
    await expectGone(pgid)
    expect(await carrying(marker)).toEqual([])
    expect(ctx.tools.get('family_family')).toBeUndefined()
  })

  it('McpClientPlugin, default grace: disposal (which Cordis waits for) leaves no process of the group', async () => {
    const fiber = ctx.plugin(McpClientPlugin as any, { servers: { family: wrapped(marker) } })
    try {
      await fiber
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { off(); reject(new Error('family_family was not imported within 20 s')) }, 20_000)
        const check = () => {
          if (!ctx.tools.get('family_family')) return
          clearTimeout(timer)
          off()
          resolve()
        }
        const off = ctx.on('tools/changed', check)
        check()
      })
      const { wrapper, server, grandchild } = await family(ctx)
      expect(await liveMembers(wrapper)).toEqual(expect.arrayContaining([wrapper, server, grandchild]))
      await fiber.dispose()
      await expectGone(wrapper)
      expect(await carrying(marker)).toEqual([])
    } finally {
      await fiber.dispose()
    }
  })

  it('a wrapper that dies leaves nothing of its group: the connection is dropped, the group ended, then it reconnects', async () => {
    guardLogs(ctx).expect('[app] MCP server "family": the connection dropped; reconnecting')
    const connection = connect(wrapped(marker))
    await connection.connected(AbortSignal.timeout(20_000))
    const pgid = connection.pid!
    const first = await family(ctx)
    // Only the wrapper: the server still holds the pipes, so without the group nothing would notice.
    process.kill(first.wrapper, 'SIGKILL')
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 20_000
      const poll = () => {
        if (connection.status === 'connected' && connection.pid !== pgid) return resolve()
        if (Date.now() > deadline) return reject(new Error(`not reconnected within 20 s (${connection.status})`))
        setTimeout(poll, 10)
      }
      poll()
    })
    // Reconnected only once the old group was gone.
    await expectGone(pgid)
    const survivors = await carrying(marker)
    expect(survivors).not.toContain(first.server)
    expect(survivors).not.toContain(first.grandchild)
    const second = await family(ctx)
    const pgid2 = connection.pid!
    expect(second.groups).toEqual([pgid2, pgid2, pgid2])
    await connection.close()
    await expectGone(pgid2)
    expect(await carrying(marker)).toEqual([])
  })

  it('closed while still connecting: the process spawned meanwhile is ended before close resolves', async () => {
    const connection = connect(wrapped(marker))
    await connection.close()
    expect(await carrying(marker)).toEqual([])
    expect(connection.status).toBe('closed')
  })
})
