import { readdir, readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { AuditRecord } from '@dogu/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardOutput } from '../../../test-support/log-guard'
import { startPlayground } from '../src'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-audit-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

/** Runs the playground on `dir` over `script` (piped) and returns what `audit` commands printed: the lines after each. */
async function run(script: string) {
  const input = new PassThrough()
  const output = new PassThrough()
  // The app's errors and warnings, printed into the transcript as `! …` lines, fail the test.
  guardOutput(output, 'playground', { marker: '! ' })
  let transcript = ''
  output.on('data', (chunk) => { transcript += chunk })
  const done = startPlayground({ input, output, dataDir: dir })
  input.end(script)
  await done
  return transcript
}

/** What the command `line` printed, up to the next prompt. */
function after(transcript: string, line: string): string[] {
  const at = transcript.indexOf(`dogu> ${line}\n`)
  if (at < 0) throw new Error(`"${line}" is not in:\n${transcript}`)
  const rest = transcript.slice(at + `dogu> ${line}\n`.length)
  return rest.slice(0, rest.indexOf('dogu> ') >= 0 ? rest.indexOf('dogu> ') : undefined).trimEnd().split('\n')
}

const TIME = '\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d'
const USER = 'terminal:playground-user'
/** A line of `audit` (the time and durations vary). */
const row = (rest: string, timing = '\\d+\\.\\d ms') => new RegExp(`^${TIME}  ${rest.replace(/[.()[\]]/g, '\\$&')}  ${timing}$`)

// lookup (read: allowed), notes add (write: asked, answered "session"), notes add again (the
// grant), write (asked, answered n: denied), an unknown tool (refused before any permission check).
const calls = [
  'call lookup {"q":"Paris"}',
  'call notes {"action":"add","text":"x"}', 's',
  'call notes {"action":"add","text":"y"}',
  'call write {"path":"a.txt","content":"hi"}', 'n',
  'call nope {}',
].join('\n') + '\n'

describe('the audit command', () => {
  it('prints the newest records, one line each, filtered by user, tool and outcome, and still has them after a restart', async () => {
    const first = await run(calls + 'audit\naudit -t notes\naudit -o denied\naudit -u playground-user -n 2\naudit -u someone-else\n')
    const all = after(first, 'audit')
    expect(all[0]).toBe('5 audit records, newest first:')
    const lines = [
      row(`error         nope  ${USER}  before any check  unknown_tool`),
      row(`denied        write  ${USER}  default (write)  asked: deny by playground-user via terminal, once  permission_denied`, '\\d+\\.\\d ms, waited \\d+ ms'),
      new RegExp(`^${TIME}  ok            notes  ${USER}  grant grant_[0-9a-f]{8} \\(session\\)  \\d+\\.\\d ms$`),
      row(`ok            notes  ${USER}  default (write)  asked: allow by playground-user via terminal, session`, '\\d+\\.\\d ms, waited \\d+ ms'),
      row(`ok            lookup  ${USER}  default (read)`),
    ]
    expect(all.slice(1)).toHaveLength(5)
    all.slice(1).forEach((line, i) => expect(line).toMatch(lines[i]))
    expect(after(first, 'audit -t notes')).toEqual(['2 audit records, newest first:', ...all.slice(3, 5)])
    expect(after(first, 'audit -o denied')).toEqual(['1 audit record, newest first:', all[2]])
    expect(after(first, 'audit -u playground-user -n 2')).toEqual(['2 audit records, newest first:', ...all.slice(1, 3)])
    expect(after(first, 'audit -u someone-else')).toEqual(['No audit records match.'])

    // Another playground on the same folder reads the same trail.
    const second = await run('audit -n 1\naudit -u terminal:playground-user -o ok -t lookup\n')
    expect(after(second, 'audit -n 1')).toEqual(['1 audit record, newest first:', all[1]])
    expect(after(second, 'audit -u terminal:playground-user -o ok -t lookup')).toEqual(['1 audit record, newest first:', all[5]])
  })

  it('--export writes every matching record, oldest first, as JSON Lines under the data folder, and says where and how many', async () => {
    const transcript = await run(calls + 'audit --export\naudit --export -o ok -t notes\naudit --export -u nobody\n')
    const [line] = after(transcript, 'audit --export')
    const match = /^Exported 5 audit records \(oldest first\) to (.+\/exports\/audit-\d{8}-\d{6}\.jsonl)$/.exec(line)
    expect(match, line).not.toBeNull()
    expect(match![1].startsWith(join(dir, 'exports/'))).toBe(true)
    const records: AuditRecord[] = (await readFile(match![1], 'utf8')).trimEnd().split('\n').map((text) => JSON.parse(text))
    expect(records.map((record) => [record.tool, record.outcome])).toEqual([['lookup', 'ok'], ['notes', 'ok'], ['notes', 'ok'], ['write', 'denied'], ['nope', 'error']])
    expect(records[1]).toMatchObject({ args: { action: 'add', text: 'x' }, caller: { platform: 'terminal', userId: 'playground-user' }, ask: { ended: 'answer', decision: 'allow', via: 'terminal', scope: 'session' } })

    // Two exports in the same second get two files.
    const [notes] = after(transcript, 'audit --export -o ok -t notes')
    expect(notes).toMatch(/^Exported 2 audit records \(oldest first\) to .+\/exports\/audit-\d{8}-\d{6}(-\d+)?\.jsonl$/)
    expect(after(transcript, 'audit --export -u nobody')[0]).toMatch(/^Exported 0 audit records \(oldest first\) to /)
    const files = await readdir(join(dir, 'exports'))
    expect(files).toHaveLength(3)
    const second = notes.slice(notes.indexOf(' to ') + 4)
    expect((await readFile(second, 'utf8')).trimEnd().split('\n').map((text) => JSON.parse(text).args)).toEqual([{ action: 'add', text: 'x' }, { action: 'add', text: 'y' }])
  })

  it('lists a call over its quota as rate_limited, decided by the quota', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    guardOutput(output, 'playground', { marker: '! ' })
    let transcript = ''
    output.on('data', (chunk) => { transcript += chunk })
    const done = startPlayground({ input, output, dataDir: dir, dogu: { tools: { quotas: [{ name: 'lookup per user', tools: 'lookup', per: 'user', max: 1, window: '1h' }] } } })
    input.end('call lookup {"q":"Paris"}\ncall lookup {"q":"Tokyo"}\naudit\naudit -o rate_limited\n')
    await done
    const refused = JSON.parse(after(transcript, 'call lookup {"q":"Tokyo"}').filter((line) => !/^ {2}[→←]/.test(line)).join('\n'))
    expect(refused).toMatchObject({ name: 'lookup', status: 'rate_limited', code: 'rate_limited' })
    expect(refused.content).toMatch(/^Rate limited: quota 'lookup per user' used: 1 per 1 h; try again in \d+ (h|min|s)\.$/)
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    const all = after(transcript, 'audit')
    expect(all[0]).toBe('2 audit records, newest first:')
    expect(all[1]).toMatch(row(`rate_limited  lookup  ${USER}  quota "lookup per user": used up  rate_limited`))
    expect(all[2]).toMatch(row(`ok            lookup  ${USER}  default (read)`))
    expect(after(transcript, 'audit -o rate_limited')).toEqual(['1 audit record, newest first:', all[1]])
  })

  it('refuses what it cannot read, with its usage', async () => {
    const transcript = await run('audit -o maybe\naudit -n 0\naudit -x\naudit --export -n 3\naudit\n')
    const usage = 'Usage: audit [-u user] [-t tool] [-o outcome] [-n count], or audit --export [-u user] [-t tool] [-o outcome] (outcome: ok|error|denied|timed_out|cancelled|background|rate_limited; count: 1-1000, default 20)'
    expect(after(transcript, 'audit -o maybe')).toEqual(['Unknown outcome "maybe".', usage])
    expect(after(transcript, 'audit -n 0')).toEqual(['-n takes a whole number from 1 to 1000, not "0".', usage])
    const unknown = after(transcript, 'audit -x')
    expect(unknown[0]).toMatch(/^Unknown option '-x'/)
    expect(unknown.slice(1)).toEqual([usage])
    expect(after(transcript, 'audit --export -n 3')).toEqual(['--export writes every matching record: -n does not apply.', usage])
    expect(after(transcript, 'audit')).toEqual(['No audit records yet.'])
  })
})
