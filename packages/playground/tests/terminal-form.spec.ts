import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type AskAnswer, defineTool, type Elicitation, type PermissionRequest } from '@dogu/core'
import Schema from 'schemastery'
import { guardOutput } from '../../../test-support/log-guard'
import { INTERRUPTED, type PlaygroundOptions, startPlayground, terminalAsker } from '../src'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-form-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

/** What `signup` was answered, in order. */
let answers: Elicitation[] = []
beforeEach(() => { answers = [] })

/** A read tool (never asked about) that asks for an account's details with `call.elicit`. */
const signup = {
  name: 'signup-tool',
  inject: ['tools'],
  apply(ctx: any) {
    ctx.tools.define(defineTool({
      name: 'signup',
      description: 'Create an account',
      args: Schema.object({}),
      traits: { effect: 'read' },
      async run(_args, call) {
        const answer = await call.elicit(Schema.object({
          username: Schema.string().required().description('Account name'),
          age: Schema.natural().max(150),
          plan: Schema.union(['free', 'pro']).default('free'),
        }), 'Which account should I create?')
        answers.push(answer)
        return answer.action === 'accept' ? `created ${JSON.stringify(answer.value)}` : answer.action
      },
    }))
  },
}

/** Runs the playground with `signup` over `script` (piped, not a TTY) and returns its transcript. */
async function run(script: string, options: PlaygroundOptions = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  // The app's errors and warnings, printed into the transcript as `! …` lines, fail the test.
  guardOutput(output, 'playground', { marker: '! ' })
  let transcript = ''
  output.on('data', (chunk) => { transcript += chunk })
  const done = startPlayground({
    input,
    output,
    dataDir: dir,
    workspace: join(dir, 'workspace'),
    plugins: [signup],
    ...options,
    dogu: { permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } },
  })
  input.end(script)
  await done
  return transcript.replace(/ in \d+(\.\d+)? ms/g, ' in # ms')
}

const PROMPT = 'Fill in the form of signup (key=value … or {json}):  [n] decline  [c] cancel '
const FORM = [
  '  signup asks: Which account should I create?',
  '    username (string, required): Account name',
  '    age (integer)',
  '    plan (one of free, pro, default "free")',
].join('\n')

describe('a tool\'s form at the terminal (call.elicit)', () => {
  it('shows the tool\'s message and fields, not an approval; key=value fills it', async () => {
    const transcript = await run(['call signup {}', 'username=bob age=30'].join('\n'))
    expect(transcript).toContain(`${FORM}\n${PROMPT}username=bob age=30\n  ← signup ok in # ms`)
    expect(transcript).not.toContain('Allow signup')
    expect(answers).toEqual([{ action: 'accept', value: { username: 'bob', age: 30, plan: 'free' }, by: expect.objectContaining({ id: 'playground-user' }) }])
  })

  it('takes JSON too', async () => {
    await run(['call signup {}', '{"username": "Ada Lovelace", "plan": "pro"}'].join('\n'))
    expect(answers[0]).toMatchObject({ action: 'accept', value: { username: 'Ada Lovelace', plan: 'pro' } })
  })

  it('explains a value the form refuses and asks again', async () => {
    const transcript = await run(['call signup {}', 'username=bob age=500', 'nick=bob', 'username="Bob B"'].join('\n'))
    expect(transcript).toMatch(/username=bob age=500\n {2}the form was not sent: .*\$\.age: expected a number <= 150, got 500/s)
    expect(transcript).toContain(`${PROMPT}nick=bob\n  the form has no field "nick"; its fields: username, age, plan\n`)
    expect(transcript).toContain(`${PROMPT}username="Bob B"\n  ← signup ok in # ms`)
    expect(answers).toEqual([expect.objectContaining({ action: 'accept', value: { username: 'Bob B', plan: 'free' } })])
  })

  it('n declines and c cancels: the tool tells them apart', async () => {
    const transcript = await run(['call signup {}', 'n', 'call signup {}', 'c'].join('\n'))
    expect(transcript).toContain('"content": "decline"')
    expect(transcript).toContain('"content": "cancel"')
    expect(answers.map((answer) => answer.action)).toEqual(['decline', 'cancel'])
    expect(answers[0]).toMatchObject({ by: { id: 'playground-user' } })
  })

  it('the end of the input, and three unreadable lines, leave it unanswered: cancel', async () => {
    await run('call signup {}')
    const transcript = await run(['call signup {}', 'what', 'is', 'this'].join('\n'))
    expect(transcript).toContain(`${PROMPT}what\n  Please type the fields as key=value pairs (a value with spaces in quotes) or as a JSON object, n to decline or c to cancel.\n`)
    expect(answers).toEqual([
      { action: 'cancel', reason: 'the input ended before an answer' },
      { action: 'cancel', reason: 'no valid answer in 3 tries' },
    ])
  })
})

describe('terminalAsker on a form', () => {
  it('lists a form given as MCP\'s requestedSchema with its formats, titled choices and defaults', async () => {
    const printed: string[] = []
    const asker = terminalAsker({ ask: async () => 'c', print: (line) => printed.push(line), approver: { id: 'me' } })
    const request = {
      id: 'perm_1',
      kind: 'elicitation',
      tool: 'register',
      reason: 'Your info',
      approvers: { userId: 'me' },
      input: {
        schema: Schema.object({}),
        message: 'Your info',
        check: () => undefined,
        requestedSchema: {
          type: 'object',
          properties: {
            email: { type: 'string', format: 'email', title: 'E-mail' },
            color: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }], default: 'r' },
            tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
          },
          required: ['email'],
        },
      },
    } as unknown as PermissionRequest
    await asker(request, { signal: new AbortController().signal, respond: () => 'accepted' })
    expect(printed).toEqual([
      '  register asks: Your info',
      '    email (string, required, format email): E-mail',
      '    color (one of r (Red), g (Green), default "r")',
      '    tags (any of a, b)',
    ])
  })

  it('Ctrl-C dismisses it: a cancel, not a decline', async () => {
    const answers: AskAnswer[] = []
    const printed: string[] = []
    const asker = terminalAsker({ ask: async () => INTERRUPTED, print: (line) => printed.push(line), approver: { id: 'me' } })
    const request = {
      id: 'perm_1',
      kind: 'elicitation',
      tool: 'signup',
      reason: 'Which account?',
      approvers: { userId: 'me' },
      input: {
        schema: Schema.object({ username: Schema.string().required() }),
        message: 'Which account?',
        initial: {},
        check: () => undefined,
        requestedSchema: { type: 'object', properties: { username: { type: 'string' } }, required: ['username'] },
      },
    } as unknown as PermissionRequest
    await asker(request, { signal: new AbortController().signal, respond: (answer) => (answers.push(answer), 'accepted') })
    expect(printed).toEqual(['  signup asks: Which account?', '    username (string, required)'])
    expect(answers).toEqual([{ decision: 'deny', dismissed: true, by: { id: 'me' }, via: 'terminal', reason: 'cancelled with Ctrl-C at the terminal' }])
  })
})
