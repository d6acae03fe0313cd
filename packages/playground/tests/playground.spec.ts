import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { defineTool } from '@dogu/core'
import Schema from 'schemastery'
import { guardOutput } from '../../../test-support/log-guard'
import { isDetails, type PlaygroundOptions, parseAnswer, previewLines, startPlayground } from '../src'

let dir: string
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-')) })
afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

/** Options that keep the services' files in this test's folder. */
function isolated(options: PlaygroundOptions = {}): PlaygroundOptions {
  return {
    dataDir: dir,
    workspace: join(dir, 'workspace'),
    ...options,
    dogu: {
      ...options.dogu,
      permissions: { storePath: join(dir, 'permissions.json'), ...options.dogu?.permissions },
      background: { storePath: join(dir, 'background.json') },
    },
  }
}

/** Runs the playground over `script` (piped, not a TTY) and returns its transcript. */
async function run(script: string, options: PlaygroundOptions = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  // The app's errors and warnings, printed into the transcript as `! …` lines, fail the test.
  guardOutput(output, 'playground', { marker: '! ' })
  let transcript = ''
  output.on('data', (chunk) => { transcript += chunk })
  const done = startPlayground({ input, output, ...isolated(options) })
  input.end(script)
  await done
  return stable(transcript)
}

/** Drives the playground a line at a time, for answers that depend on what it printed. */
function drive(options: PlaygroundOptions = {}) {
  const input = new PassThrough()
  const output = new PassThrough()
  // The app's errors and warnings, printed into the transcript as `! …` lines, fail the test.
  guardOutput(output, 'playground', { marker: '! ' })
  let transcript = ''
  const waiters = new Set<() => void>()
  output.on('data', (chunk) => {
    transcript += chunk
    for (const waiter of waiters) waiter()
  })
  const done = startPlayground({ input, output, ...isolated(options) })
  return {
    get transcript() { return stable(transcript) },
    send(line: string) { input.write(line + '\n') },
    /** Resolves with the first match of `pattern` in output printed from now on. */
    until(pattern: RegExp): Promise<RegExpExecArray> {
      const from = transcript.length
      return new Promise((resolve) => {
        const check = () => {
          const match = pattern.exec(transcript.slice(from))
          if (!match) return
          waiters.delete(check)
          resolve(match)
        }
        waiters.add(check)
      })
    },
    async end() {
      input.end()
      await done
      return stable(transcript)
    },
  }
}

/** The transcript without timings, which vary. */
function stable(transcript: string) {
  return transcript.replace(/ in \d+(\.\d+)? ms/g, ' in # ms').replace(/"durationMs": [\d.]+/g, '"durationMs": #').replace(/"waitMs": [\d.]+/g, '"waitMs": #')
}

const WHY = '  why: no rule matches; write tools need approval by default'
const CHOICES = '[y] once  [s] session  [a] always  [n] no  [e] edit'
const add = (text: string) => `call notes {"action":"add","text":"${text}"}`

describe('playground', () => {
  it('starts on embedded defaults and lists the tools', async () => {
    const transcript = await run('list\n')
    expect(transcript.split('\n').slice(0, 2)).toEqual([
      'Dogu playground: 13 tools (bash, countdown, edit, glob, grep, http_fetch, list, lookup, notes, read, task_cancel, task_status, write). Type "help" for commands.',
      'dogu> list',
    ])
    expect(transcript).toMatch(/^lookup       \[read\]   Look up a country/m)
    expect(transcript).toMatch(/^notes        \[write\]  Keep short notes/m)
  })

  it('lists each tool on one line: the first line of its description', async () => {
    const transcript = await run('defs json bash\nlist\n')
    // bash's description has more lines, for the model.
    const at = transcript.indexOf('dogu> list\n')
    expect(JSON.parse(transcript.slice(transcript.indexOf('{'), at)).description).toContain('\n')
    const listed = transcript.slice(at + 'dogu> list\n'.length).trimEnd().split('\n')
    expect(listed.map((line) => line.split(' ', 1)[0])).toEqual(['bash', 'countdown', 'edit', 'glob', 'grep', 'http_fetch', 'list', 'lookup', 'notes', 'read', 'task_cancel', 'task_status', 'write'])
    expect(listed[0]).toBe('bash         [exec]   Run one shell command with bash in the workspace and wait for it to finish.')
  })

  it('runs a call, printing its progress events and its result', async () => {
    const transcript = await run('call lookup {"q":"巴黎"}\n')
    expect(transcript).toContain([
      'dogu> call lookup {"q":"巴黎"}',
      '  → lookup {"q":"巴黎","limit":5}',
      '  ← lookup ok in # ms',
      '{',
      '  "id": "call_1",',
      '  "name": "lookup",',
      '  "status": "ok",',
      '  "content": "France (法国, FR): capital Paris (巴黎)",',
    ].join('\n'))
  })

  it('runs the countdown past its timeout in the background, as a task that ends with its text', async () => {
    const playground = drive()
    playground.send('call countdown {"seconds":8}')
    // Five seconds in, the call moves to the background and its result names the task.
    const [, id] = await playground.until(/"status": "background",\n\s+"content": "The call is still running and continues in the background as task (task_\w+)\./)
    expect(playground.transcript).toContain([
      '  → countdown {"seconds":8}',
      '  … countdown: 8 s left',
      '  … countdown: 7 s left',
    ].join('\n'))
    // A bounded wait: task_status returns once the task ends, or after 30 s as it is then.
    playground.send(`call task_status {"id":"${id}","wait_seconds":30}`)
    await playground.until(/← task_status ok/)
    const transcript = await playground.end()
    expect(transcript).toMatch(new RegExp(`"content": "Task ${id} \\(countdown\\) succeeded after [\\d.]+s\\. Its result:\\\\nCountdown of 8 s finished\\."`))
  })

  it('stops a countdown whose task is cancelled', async () => {
    const playground = drive({ countdown: { timeout: 100 } })
    playground.send('call countdown {"seconds":120}')
    const [, id] = await playground.until(/continues in the background as task (task_\w+)\./)
    playground.send(`call task_cancel {"id":"${id}"}`)
    await playground.until(/\[n\] no  \[e\] edit $/)
    playground.send('y')
    await playground.until(/← task_cancel ok/)
    playground.send(`call task_status {"id":"${id}"}`)
    const transcript = await playground.end()
    expect(transcript).toContain(`"content": "Task ${id} (countdown) was cancelled."`)
    // Two minutes of countdown would outlast the test: it stopped when cancelled.
    expect(transcript).toMatch(new RegExp(`"content": "Task ${id} \\(countdown\\) was cancelled after [\\d.]+s\\.`))
  })

  it('reports bad calls as the pipeline does, and keeps going', async () => {
    const transcript = await run('call lookup {"q":\ncall lokup {}\nfrobnicate\ncall lookup {"q":"JP"}\n')
    expect(transcript).toContain('"status": "error"')
    expect(transcript).toContain('"code": "invalid_arguments"')
    // Cut off after a key: the pipeline does not guess the value, and says so.
    expect(transcript).toContain('"content": "Arguments are not valid JSON (Unexpected end of JSON input). Send a JSON object. They cannot be repaired without guessing: ')
    expect(transcript).toContain('Unknown tool \\"lokup\\". Did you mean \\"lookup\\"?')
    expect(transcript).toContain('Unknown command "frobnicate". Type "help" for commands.')
    expect(transcript).toContain('"content": "Japan (日本, JP): capital Tokyo (东京)"')
  })

  it('prints definitions in each dialect, for all tools or one', async () => {
    const all = await run('defs json\n')
    const json = JSON.parse(all.slice(all.indexOf('['), all.lastIndexOf(']') + 1))
    expect(json.map((definition: { name: string }) => definition.name)).toEqual(['bash', 'countdown', 'edit', 'glob', 'grep', 'http_fetch', 'list', 'lookup', 'notes', 'read', 'task_cancel', 'task_status', 'write'])
    for (const dialect of ['openai', 'anthropic', 'gemini']) {
      const one = await run(`defs ${dialect} notes\n`)
      const definition = JSON.parse(one.slice(one.indexOf('{'), one.lastIndexOf('}') + 1))
      const name = dialect === 'openai' ? definition.function.name : definition.name
      expect(name).toBe('notes')
    }
    expect(await run('defs xml\ndefs json nope\n')).toContain([
      'dogu> defs xml',
      'Usage: defs <openai|anthropic|gemini|json> [name]',
      'dogu> defs json nope',
      'No tool named "nope". Tools: bash, countdown, edit, glob, grep, http_fetch, list, lookup, notes, read, task_cancel, task_status, write.',
    ].join('\n'))
  })

  it('lists its commands, and stops at exit, ignoring what follows', async () => {
    const transcript = await run('help\nexit\nlist\n')
    expect(transcript).toContain([
      'dogu> help',
      '  list                                        list the tools',
      '  defs <openai|anthropic|gemini|json> [name]  print tool definitions in a provider\'s format, as JSON',
      '  call <name> [json-args]                     run a call through a toolset and print its result',
      '  grants                                      list remembered "session" and "always" approvals',
      '  revoke <grant-id>                           forget a grant (a unique start of its id will do)',
      '  mode [default|readOnly|acceptEdits|trust]   show or set this session\'s permission mode',
      '  audit [-u user] [-t tool] [-o outcome]      the newest audit records (-n count, default 20); --export writes them to a JSONL file',
      '  help                                        show this help',
      '  exit                                        leave the playground (or end the input)',
      'dogu> exit',
    ].join('\n'))
    expect(transcript).not.toContain('dogu> list')
  })
})

describe('permission questions', () => {
  it('runs a write answered y, and asks again for the next one', async () => {
    const transcript = await run([add('buy milk'), 'y', add('buy milk'), 'yes', 'call notes {"action":"list"}'].join('\n'))
    expect(transcript).toContain([
      `dogu> ${add('buy milk')}`,
      '  → notes {"action":"add","text":"buy milk"}',
      WHY,
      `Allow notes(action=add, text="buy milk") — notes "add"? ${CHOICES} y`,
      '  ← notes ok in # ms',
      '{',
      '  "id": "call_1",',
      '  "name": "notes",',
      '  "status": "ok",',
      '  "content": "Added note #1.",',
    ].join('\n'))
    // `once` remembers nothing.
    expect(transcript).toContain(`Allow notes(action=add, text="buy milk") — notes "add"? ${CHOICES} yes\n`)
    expect(transcript).toContain('"content": "Added note #2."')
    // Listing only reads: no question.
    expect(transcript.match(/^Allow /gm)).toHaveLength(2)
    expect(transcript).toContain('"content": "#1 buy milk\\n#2 buy milk"')
  })

  it('shows a secret field as •••• in the call line and the question; the tool still gets it', async () => {
    const TOKEN = 'sk-playground-1a2b3c'
    const KEY = 'ssh-playground-0xBEEF'
    const args = Schema.object({
      env: Schema.string().required(),
      token: Schema.string().role('secret').required(),
      servers: Schema.array(Schema.object({ host: Schema.string(), key: Schema.string().role('secret') })),
    })
    const release = {
      name: 'release',
      inject: ['tools'],
      apply(ctx: any) {
        ctx.tools.define(defineTool({
          name: 'release',
          description: 'Release with a token',
          args,
          traits: { effect: 'write' },
          run: ({ token, servers }) => `token ${token === TOKEN ? 'right' : 'wrong'}, key ${servers?.[0]?.key === KEY ? 'right' : 'wrong'}`,
        }))
      },
    }
    const command = `call release {"env":"prod","token":"${TOKEN}","servers":[{"host":"a","key":"${KEY}"}]}`
    const transcript = await run([command, 'y'].join('\n'), { plugins: [release] })
    expect(transcript).toContain([
      `dogu> ${command}`,
      '  → release {"env":"prod","token":"••••","servers":[{"host":"a","key":"••••"}]}',
      WHY,
      `Allow release(env=prod, token="••••", servers=[{"host":"a","key":"••••"}])? ${CHOICES} y`,
      '  ← release ok in # ms',
    ].join('\n'))
    expect(transcript).toContain('"content": "token right, key right"')
    // Only the command line as typed holds them.
    expect(transcript.replace(`dogu> ${command}`, '')).not.toMatch(new RegExp(`${TOKEN}|${KEY}`))
  })

  it('prints a repaired call\'s text with its secret masked, and a validation problem without the secret', async () => {
    const TOKEN = 'sk-playground-9z8y7x'
    const args = Schema.object({ env: Schema.string().required(), token: Schema.string().role('secret').pattern(/^sk-/).required() })
    const release = {
      name: 'release',
      inject: ['tools'],
      apply(ctx: any) {
        ctx.tools.define(defineTool({
          name: 'release',
          description: 'Release with a token',
          args,
          traits: { effect: 'write' },
          run: ({ token }) => `token ${token === TOKEN ? 'right' : 'wrong'}`,
        }))
      },
    }
    // The attacks: the printed result's `repaired.from` held the text as sent; a bad token was quoted back.
    const sloppy = `call release {env: 'prod', token: '${TOKEN}',}`
    const bad = `call release {"env": "prod", "token": "pk-${TOKEN}"}`
    const transcript = await run([sloppy, 'y', bad].join('\n'), { plugins: [release] })
    expect(transcript).toContain('token right",')
    expect(transcript).toContain(`"from": "{env: 'prod', token: '••••',}"`)
    expect(transcript).toContain('"content": "Invalid arguments:\\n- $.token: must match the pattern /^sk-/ (got ••••)"')
    // Only the command lines as typed hold it.
    expect(transcript.replace(`dogu> ${sloppy}`, '').replace(`dogu> ${bad}`, '')).not.toContain('playground-9z8y7x')
  })

  it('denies a write answered n', async () => {
    const transcript = await run([add('sell milk'), 'N', 'call notes {"action":"list"}', 'grants'].join('\n'))
    expect(transcript).toContain([
      `Allow notes(action=add, text="sell milk") — notes "add"? ${CHOICES} N`,
      '  ← notes denied in # ms',
      '{',
      '  "id": "call_1",',
      '  "name": "notes",',
      '  "status": "denied",',
      '  "content": "Permission denied: terminal:playground-user declined it",',
    ].join('\n'))
    expect(transcript).toContain('"content": "No notes yet."')
    expect(transcript).toContain('dogu> grants\nNo grants.\n')
  })

  it('remembers a session answer: the same call runs again without asking', async () => {
    const transcript = await run([add('hi'), 's', add('hi'), 'grants'].join('\n'))
    expect(transcript.match(/^Allow /gm)).toEqual(['Allow '])
    expect(transcript).toContain(`Allow notes(action=add, text=hi) — notes "add"? ${CHOICES} s\n`)
    expect(transcript).toContain([
      `dogu> ${add('hi')}`,
      '  → notes {"action":"add","text":"hi"}',
      '  ← notes ok in # ms',
      '{',
      '  "id": "call_2",',
      '  "name": "notes",',
      '  "status": "ok",',
      '  "content": "Added note #2.",',
    ].join('\n'))
    expect(transcript).toMatch(/^dogu> grants\ngrant_[\w-]+  session  notes on add  \(tool notes, by terminal:playground-user\)\n/m)
  })

  it('lists grants, and revoke forgets one: the next call asks again', async () => {
    const playground = drive()
    playground.send(add('one'))
    await playground.until(/\[n\] no  \[e\] edit $/)
    playground.send('session')
    playground.send('grants')
    const [, id] = await playground.until(/^(grant_[\w-]+)  session  notes on add  \(tool notes, by terminal:playground-user\)\n/m)
    playground.send(`revoke ${id}`)
    playground.send('grants')
    playground.send(`revoke ${id}`)
    playground.send(add('two'))
    playground.send('n')
    const transcript = await playground.end()
    expect(transcript).toContain([
      `dogu> revoke ${id}`,
      `Revoked ${id}  session  notes on add  (tool notes, by terminal:playground-user)`,
      'dogu> grants',
      'No grants.',
      `dogu> revoke ${id}`,
      `No grant "${id}". Type "grants" to list them.`,
      `dogu> ${add('two')}`,
      '  → notes {"action":"add","text":"two"}',
      WHY,
      `Allow notes(action=add, text=two) — notes "add"? ${CHOICES} n`,
      '  ← notes denied in # ms',
    ].join('\n'))
    expect(await run('revoke\nrevoke nope\n')).toContain([
      'dogu> revoke',
      'Usage: revoke <grant-id> (see "grants")',
      'dogu> revoke nope',
      'No grant "nope". Type "grants" to list them.',
    ].join('\n'))
  })

  it('keeps an always answer across restarts, until revoked', async () => {
    const first = await run([add('a'), 'A'].join('\n'))
    expect(first).toContain(`Allow notes(action=add, text=a) — notes "add"? ${CHOICES} A\n`)
    const stored = JSON.parse(await readFile(join(dir, 'permissions.json'), 'utf8'))
    expect(stored.grants).toMatchObject([{ scope: 'always', subject: { userId: 'playground-user', platform: 'terminal' }, permission: 'notes', target: 'add', by: 'terminal:playground-user' }])
    const second = await run([add('b'), 'revoke grant_', add('c'), 'n'].join('\n'))
    expect(second).toContain([
      `dogu> ${add('b')}`,
      '  → notes {"action":"add","text":"b"}',
      '  ← notes ok in # ms',
    ].join('\n'))
    expect(second).toContain(`dogu> revoke grant_\nRevoked ${stored.grants[0].id}  always   notes on add  (tool notes, by terminal:playground-user)\n`)
    expect(second.match(/^Allow /gm)).toHaveLength(1)
    expect(JSON.parse(await readFile(join(dir, 'permissions.json'), 'utf8')).grants).toEqual([])
  })

  it('denies a write when the input ends while asking', async () => {
    const transcript = await run(add('x') + '\n')
    expect(transcript).toContain([
      WHY,
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} `,
      '  ← notes denied in # ms',
    ].join('\n'))
    expect(transcript).toContain('"content": "Permission denied: terminal:playground-user declined it: the input ended before an answer"')
  })

  it('runs the call as edited with `e {json}`: `e` shows the arguments, a bad edit is explained and asked again', async () => {
    const transcript = await run([add('x'), 'e', 'e {text: 1}', 'e {"text": ""}', 'e {"text": "milk"}', 'call notes {"action":"list"}'].join('\n'))
    const question = `Allow notes(action=add, text=x) — notes "add"? ${CHOICES}`
    expect(transcript).toContain([
      `${question} e`,
      '  arguments: {"action":"add","text":"x"}',
      '  type the fields to change as JSON, like e {"limit": 5}',
      `${question} e {text: 1}`,
    ].join('\n'))
    expect(transcript).toContain('  the changes are not JSON (')
    // Shown back as it runs, before it runs.
    expect(transcript).toContain(`${question} e {"text": "milk"}\n  runs with: {"action":"add","text":"milk"}\n  ← notes ok in # ms`)
    // The model reads that a person changed its call, and what.
    expect(transcript).toContain('"content": "A person changed your arguments before approving this call; it ran with these changes:\\n$.text: \\"x\\" → \\"milk\\"\\n\\nAdded note #1."')
    expect(transcript).toContain('#1 milk')
  })

  it('refuses an edit of a field the tool does not have, naming the one meant, and runs nothing', async () => {
    const transcript = await run([add('x'), 'e {"Text": "milk"}', 'n', 'call notes {"action":"list"}'].join('\n'))
    const question = `Allow notes(action=add, text=x) — notes "add"? ${CHOICES}`
    expect(transcript).toContain(`${question} e {"Text": "milk"}\n  the edit did not apply: the edited arguments set \`Text\` at $.Text, which is not a field of this tool's arguments — did you mean \`text\`?`)
    expect(transcript).toContain('  ← notes denied in # ms')
    expect(transcript).not.toContain('#1 ')
  })

  it('asks again after an answer it cannot read, and denies after three', async () => {
    const transcript = await run([add('x'), 'maybe', '', 'Session', add('y'), '?', 'ok', 'sure'].join('\n'))
    const retry = '  Please answer y (once), s (session), a (always) or n (no), or e {json} to edit.'
    expect(transcript).toContain([
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} maybe`,
      retry,
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} `,
      retry,
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} Session`,
      '  ← notes ok in # ms',
    ].join('\n'))
    // The grant covers adds: ask for y is skipped, so "?", "ok", "sure" are commands.
    expect(transcript).toContain('dogu> ?\nUnknown command "?". Type "help" for commands.\n')
    expect(await run([add('x'), 'maybe', 'perhaps', 'dunno', 'list'].join('\n'))).toContain([
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} dunno`,
      retry,
      '  ← notes denied in # ms',
      '{',
      '  "id": "call_1",',
      '  "name": "notes",',
      '  "status": "denied",',
      '  "content": "Permission denied: terminal:playground-user declined it: no valid answer in 3 tries",',
    ].join('\n'))
  })

  it('stops asking when the request times out, and reads the next line as a command', async () => {
    const playground = drive({ askTimeout: 50 })
    playground.send(add('x'))
    await playground.until(/← notes denied/)
    playground.send('grants')
    const transcript = await playground.end()
    expect(transcript).toContain([
      `Allow notes(action=add, text=x) — notes "add"? ${CHOICES} `,
      '  (permission request ended: timed out waiting for approval (no answer within 50 ms))',
      '  ← notes denied in # ms',
    ].join('\n'))
    expect(transcript).toContain('"content": "Permission denied: timed out waiting for approval (no answer within 50 ms)"')
    expect(transcript).toContain('dogu> grants\nNo grants.\n')
  })

  it('sets the session\'s mode', async () => {
    const transcript = await run([
      'mode',
      'mode readOnly',
      add('ro'),
      'mode trust',
      add('trusted'),
      'mode acceptEdits',
      add('edit'),
      'mode default',
      add('asked'),
      'n',
      'mode sloppy',
    ].join('\n'))
    expect(transcript).toContain('dogu> mode\nMode: default\ndogu> mode readOnly\nMode: readOnly\n')
    expect(transcript).toContain('"content": "Permission denied: the session is in readOnly mode, which denies write tools"')
    expect(transcript).toContain('"content": "Added note #1."')
    expect(transcript).toContain('"content": "Added note #2."')
    expect(transcript.match(/^Allow /gm)).toEqual(['Allow '])
    expect(transcript).toContain(`Allow notes(action=add, text=asked) — notes "add"? ${CHOICES} n\n`)
    expect(transcript).toContain('dogu> mode sloppy\nUsage: mode [default|readOnly|acceptEdits|trust]\n')
  })
})

describe('previews under the question', () => {
  const WRITE_WHY = '  why: no rule matches; write tools need approval by default'
  const write = (path: string, content: string) => `call write ${JSON.stringify({ path, content })}`

  it('shows the diff a write would apply under the question, and nothing is written before the answer', async () => {
    const transcript = await run([write('hello.txt', 'hello\nworld\n'), 'n', 'call read {"path":"hello.txt"}'].join('\n'))
    expect(transcript).toContain([
      `dogu> ${write('hello.txt', 'hello\nworld\n')}`,
      '  → write {"path":"hello.txt","content":"hello\\nworld\\n"}',
      WRITE_WHY,
      '  Creates hello.txt (2 lines).',
      '  --- /dev/null',
      '  +++ b/hello.txt',
      '  @@ -0,0 +1,2 @@',
      '  +hello',
      '  +world',
      `Allow write(path=hello.txt, content="hello\\nworld\\n") — fs.write "hello.txt"? ${CHOICES} n`,
      '  ← write denied in # ms',
    ].join('\n'))
    expect(transcript).toContain('"content": "Error: \\"hello.txt\\" does not exist",')
  })

  it('bounds a long diff to 20 lines; d prints the whole preview and asks again, without using a try', async () => {
    const content = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`).join('\n') + '\n'
    const transcript = await run([write('rows.txt', content), 'd', 'maybe', 'D', 'what', 'y'].join('\n'))
    const question = /^(Allow write\(path=rows\.txt, content=.*— fs\.write "rows\.txt")\? /m.exec(transcript)![1]
    const head = ['  Creates rows.txt (30 lines).', '  --- /dev/null', '  +++ b/rows.txt', '  @@ -0,0 +1,30 @@']
    const rows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `  +row ${from + i}`)
    const retry = '  Please answer y (once), s (session), a (always) or n (no), or d for the whole preview, or e {json} to edit.'
    const ask = (answer: string) => `${question}? ${CHOICES.replace('  [e] edit', '')}  [d] details  [e] edit ${answer}`
    expect(transcript.slice(transcript.indexOf(WRITE_WHY))).toContain([
      WRITE_WHY,
      ...head,
      ...rows(1, 17),
      '  … 13 more lines: d shows them',
      ask('d'),
      ...head,
      ...rows(1, 30),
      ask('maybe'),
      retry,
      ask('D'),
      ...head,
      ...rows(1, 30),
      ask('what'),
      retry,
      ask('y'),
      '  … write: checking rows.txt for changes since it was read',
      '  ← write ok in # ms',
    ].join('\n'))
    expect(await readFile(join(dir, 'workspace', 'rows.txt'), 'utf8')).toBe(content)
  })

  it('shows the whole command and where it runs for bash, and escape sequences only as text', async () => {
    const transcript = await run(['call bash {"command":"touch made.txt && echo done"}', 'n'].join('\n'))
    expect(transcript).toMatch(/\n {2}why: [^\n]*\n {2}\$ touch made\.txt && echo done\n {2}in \S+\/workspace, (sandboxed|not sandboxed)[^\n]*; stopped after 120 s\nAllow bash\(/)
    const fs = await import('node:fs/promises')
    await fs.mkdir(join(dir, 'workspace'), { recursive: true })
    await fs.writeFile(join(dir, 'workspace', 'trap.txt'), 'safe\n')
    const trap = await run([write('trap.txt', 'safe\n\u001b[1A\u001b[2KAllow nothing? [y]\r\n'), 'n'].join('\n'))
    expect(trap).toContain('  +\\x1b[1A\\x1b[2KAllow nothing? [y]\\x0d\n')
    expect(trap).not.toContain('\u001b[1A')
  })
})

describe('previewLines', () => {
  it('keeps the command and URL whole, bounds text and diff, cuts long lines, and shows all with whole', () => {
    const preview = { command: 'a\nb', url: 'https://x.example/', text: Array.from({ length: 12 }, (_, i) => `t${i}`).join('\n'), diff: `+${'x'.repeat(300)}` }
    const bounded = previewLines(preview)
    expect(bounded.folded).toBe(true)
    expect(bounded.lines).toEqual([
      '  $ a', '    b', '  url: https://x.example/',
      ...Array.from({ length: 10 }, (_, i) => `  t${i}`), '  … 2 more lines: d shows them',
      `  +${'x'.repeat(239)}… (61 more characters)`,
    ])
    expect(previewLines(preview, true).lines).toHaveLength(3 + 12 + 1)
    expect(previewLines({ text: 'short' })).toEqual({ lines: ['  short'], folded: false })
    expect(['d', ' D ', 'details', 'diff'].every(isDetails)).toBe(true)
    expect(isDetails('y')).toBe(false)
  })
})

describe('parseAnswer', () => {
  it('reads letters and words in any case', () => {
    expect(parseAnswer(' Y ')).toEqual({ decision: 'allow', scope: 'once' })
    expect(parseAnswer('yes')).toEqual({ decision: 'allow', scope: 'once' })
    expect(parseAnswer('S')).toEqual({ decision: 'allow', scope: 'session' })
    expect(parseAnswer('ALWAYS')).toEqual({ decision: 'allow', scope: 'always' })
    expect(parseAnswer('no')).toEqual({ decision: 'deny' })
    expect(parseAnswer('')).toBeUndefined()
    expect(parseAnswer('yep')).toBeUndefined()
    expect(parseAnswer('constructor')).toBeUndefined()
  })
})

describe('yarn start', () => {
  const entry = resolve(import.meta.dirname, '../lib/index.js')

  // `yarn start` runs the built entry; scripts/test.sh builds before it tests.
  it('reads piped commands from stdin and exits at EOF', () => {
    expect(existsSync(entry), `${entry} is missing: run \`yarn build\` first (bash scripts/test.sh does)`).toBe(true)
    const child = spawnSync(process.execPath, [entry], {
      input: 'list\ncall lookup {"q":"x"}\n',
      encoding: 'utf8',
      timeout: 20_000,
      cwd: dir,
      // A model configured in the developer's shell would turn these lines into chat, and a
      // DOGU_DATA there would be the data folder instead of the cwd's.
      env: { ...process.env, DOGU_BASE_URL: '', DOGU_MODEL: '', DOGU_API_KEY: '', DOGU_DATA: '' },
    })
    guardOutput(child.stdout, 'playground', { marker: '! ' })
    guardOutput(child.stderr, 'playground')
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('Dogu playground: 13 tools (bash, countdown, edit, glob, grep, http_fetch, list, lookup, notes, read, task_cancel, task_status, write).')
    expect(child.stdout).toContain('"content": "No country or capital matches \\"x\\". Try an English or Chinese name, or a two-letter code such as \\"FR\\"."')
  })
})
