import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardOutput } from '../../../test-support/log-guard'
import { startPlayground } from '../src'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-webui-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

describe('playground with the console', () => {
  it('prints the console address on its own line; the console answers the playground\'s question first', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    // The app's errors and warnings, printed into the transcript as `! …` lines, fail the test.
    guardOutput(output, 'playground', { marker: '! ' })
    let transcript = ''
    const printed: Array<() => void> = []
    output.on('data', (chunk) => {
      transcript += chunk
      for (const wake of printed.splice(0)) wake()
    })
    const until = async (pattern: RegExp) => {
      const deadline = Date.now() + 10_000
      while (!pattern.test(transcript)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern} in:\n${transcript}`)
        await new Promise<void>((resolve) => { printed.push(resolve); setTimeout(resolve, 50) })
      }
      return pattern.exec(transcript)!
    }
    const done = startPlayground({
      input,
      output,
      webui: { port: 0 },
      dataDir: dir,
      workspace: join(dir, 'workspace'),
      dogu: { permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } },
    })
    const [url] = await until(/^http:\/\/127\.0\.0\.1:\d+\/dogu$/m)
    expect(transcript.split('\n')[1]).toBe(url)
    const send = async (method: string, payload: unknown = {}) => {
      const response = await fetch(`${url}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload), signal: AbortSignal.timeout(10_000) })
      return response.json() as Promise<any>
    }
    expect((await send('tools.list')).map((tool: any) => tool.name)).toEqual(expect.arrayContaining(['lookup', 'notes', 'task_cancel', 'task_status']))
    expect((await fetch(url)).headers.get('content-type')).toBe('text/html; charset=utf-8')

    input.write('call notes {"action":"add","text":"from the console"}\n')
    await until(/\[y\] once {2}\[s\] session {2}\[a\] always {2}\[n\] no/)
    const [question] = await send('approvals.list')
    expect(question.summary).toBe('notes(action=add, text="from the console") — notes "add"')
    expect(await send('approvals.answer', { id: question.id, decision: 'allow' })).toEqual({ status: 'accepted' })
    await until(/← notes ok/)

    // The file tools' writes reach the console's File changes view, and undo there removes them.
    expect(await send('changes.list')).toEqual([])
    input.write('call write {"path":"hello.txt","content":"hi"}\n')
    await until(/write\(path=hello\.txt/)
    const pending = (await send('approvals.list')).find((item: any) => item.tool === 'write')
    expect(await send('approvals.answer', { id: pending.id, decision: 'allow' })).toEqual({ status: 'accepted' })
    await until(/← write ok/)
    const [change] = await send('changes.list')
    expect(change).toMatchObject({ path: 'hello.txt', type: 'created' })
    expect(await send('changes.undo', { id: change.id })).toMatchObject({ id: change.id, status: 'undone' })
    await expect(readFile(join(dir, 'workspace', 'hello.txt'), 'utf8')).rejects.toThrow()
    input.end()
    await done
    await expect(fetch(`${url}/api/tools.list`)).rejects.toThrow()
  })
})
