import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuditRecord } from '@dogu/core'
import type { Client } from '@koishijs/console'
import { afterEach, describe, expect, it } from 'vitest'
import { AuditService } from '../src'
import { consoleApp } from './console-app'

let t: Awaited<ReturnType<typeof consoleApp>> | undefined
let dir: string | undefined
afterEach(async () => {
  await t?.dispose()
  t = undefined
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

/** Calls a console listener as a console client that is not logged in (no plugin-auth), through the console's own checks. */
async function send(method: string, payload: unknown) {
  const listener = t!.app.console.listeners[`dogu/${method}`]
  if (!listener) throw new Error(`no console listener dogu/${method}`)
  const from = {} as Client
  if (await t!.app.serial('console/intercept', from, listener)) return 'unauthorized'
  return listener.callback.call(from, payload)
}

type Reply = { value: { records: AuditRecord[]; next?: string } } | { error: { code: string; message: string } }

describe('the audit log on the Dogu page of Koishi\'s console', () => {
  it('says the audit service is not loaded, then reads ctx.audit once it is: filters, pages and refusals', async () => {
    t = await consoleApp()
    expect(await send('audit.list', {})).toEqual({ error: { code: 'UNAVAILABLE', message: 'the audit service is not loaded' } })

    dir = await mkdtemp(join(tmpdir(), 'dogu-koishi-console-audit-'))
    const audit = t.app.plugin(AuditService, { storePath: join(dir, 'audit.jsonl') })
    await t.settle()
    for (const [tool, args, userId] of [['echo', { text: 'hi' }, 'alice'], ['echo', { text: 'yo' }, 'bob'], ['echo', {}, 'alice']] as const) {
      await send('call', { tool, args, sessionId: 'mock:room', userId })
    }
    const all = await send('audit.list', {}) as Reply
    if ('error' in all) throw new Error(all.error.message)
    expect(all.value.records.map((record) => [record.tool, `${record.caller.platform}:${record.caller.userId}`, record.outcome])).toEqual([
      ['echo', 'webui:alice', 'error'],
      ['echo', 'webui:bob', 'ok'],
      ['echo', 'webui:alice', 'ok'],
    ])
    expect(all.value.records[1].args).toEqual({ text: 'yo' })
    expect(all.value.next).toBeUndefined()

    const alice = await send('audit.list', { user: 'webui:alice', outcome: 'ok' }) as Reply
    expect('value' in alice && alice.value.records.map((record) => record.args)).toEqual([{ text: 'hi' }])
    const page = await send('audit.list', { limit: 2 }) as Reply
    if (!('value' in page)) throw new Error('no page')
    expect(page.value.records).toHaveLength(2)
    const older = await send('audit.list', { limit: 2, before: page.value.next }) as Reply
    expect('value' in older && older.value.records.map((record) => record.caller.userId)).toEqual(['alice'])

    expect(await send('audit.list', { outcome: 'maybe' })).toMatchObject({ error: { code: 'INVALID_PAYLOAD', message: expect.stringMatching(/^audit\.list: \$\.outcome /) } })
    expect(await send('audit.list', { limit: 201 })).toEqual({ error: { code: 'INVALID_PAYLOAD', message: 'audit.list: $.limit expected number <= 200 but got 201' } })

    // Unloaded, it is gone from the page again.
    audit.dispose()
    await t.settle()
    expect(await send('audit.list', {})).toMatchObject({ error: { code: 'UNAVAILABLE' } })
  })
})
