import { type ScriptedServer, startScriptedServer } from '@dogu/agent'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { guardOutput } from '../../../test-support/log-guard'
import { type Script } from '@dogu/agent'
import { demoModel, modelFromEnv, type PlaygroundOptions, SLOPPY_WAYS, sloppyDemoModel, startPlayground } from '../src'

let dir: string
let server: ScriptedServer | undefined
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'dogu-playground-chat-')) })
afterEach(async () => {
  await server?.close()
  server = undefined
  await rm(dir, { recursive: true, force: true })
})

/** Runs the playground over piped `script`, chatting with the demo model, and returns its transcript. */
async function chat(script: string, options: PlaygroundOptions = {}, model: Script = demoModel) {
  server = await startScriptedServer({ script: model, model: 'dogu-demo' })
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
    model: { baseURL: server.baseURL, model: 'dogu-demo' },
    dogu: { permissions: { storePath: join(dir, 'permissions.json') }, background: { storePath: join(dir, 'background.json') } },
    ...options,
  })
  input.end(script)
  await done
  return transcript.replace(/ in \d+(\.\d+)? ms/g, ' in # ms')
}

describe('playground chat', () => {
  it('turns free text into a chat turn: the model\'s text, its calls and their results show as they happen', async () => {
    const transcript = await chat('capital of Japan?\n')
    expect(transcript).toContain([
      `Chatting with dogu-demo at ${server!.baseURL}: type a message; commands start with "/" (/help, /exit).`,
      'dogu> capital of Japan?',
      'model: Let me look that up.',
      '  → lookup {"q":"Japan","limit":5}',
      '  ← lookup ok in # ms',
      '  = lookup ok: Japan (日本, JP): capital Tokyo (东京)',
      'model: Done. The tool said: Japan (日本, JP): capital Tokyo (东京)',
      '',
    ].join('\n'))
    // Each request was one a strict endpoint accepts.
    expect(server!.requests.map((request) => request.problems)).toEqual([[], []])
  })

  it('asks at the terminal before a write; a "no" reaches the model as a denial', async () => {
    const transcript = await chat('note buy milk\nn\n')
    expect(transcript).toContain([
      'dogu> note buy milk',
      'model: I will add that as a note.',
      '  → notes {"action":"add","text":"buy milk"}',
      '  why: no rule matches; write tools need approval by default',
      'Allow notes(action=add, text="buy milk") — notes "add"? [y] once  [s] session  [a] always  [n] no  [e] edit n',
      '  ← notes denied in # ms',
      '  = notes denied: Permission denied: terminal:playground-user declined it',
      'model: Done. The tool said: Denied: Permission denied: terminal:playground-user declined it',
    ].join('\n'))
  })

  it('keeps the conversation across lines, runs /commands, and writes files in its sandbox', async () => {
    const transcript = await chat('write a file\ny\n/list\nhello\n')
    expect(transcript).toContain('  = write ok: ')
    expect(await readFile(join(dir, 'workspace', 'hello.txt'), 'utf8')).toBe('write a file\n')
    expect(transcript).toContain('dogu> /list\nbash ')
    expect(transcript).toContain('model: Hello! I am the demo model.')
    // The third request carried the whole conversation so far.
    expect(server!.requests.at(-1)!.body.messages!.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user'])
  })

  it('names commands with their "/" in every hint', async () => {
    const transcript = await chat('/frob\n/revoke\n/revoke nope\n')
    expect(transcript).toMatch(/^Dogu playground: 13 tools \(.*\)\. Type "\/help" for commands\.$/m)
    expect(transcript).toContain([
      'dogu> /frob',
      'Unknown command "frob". Type "/help" for commands.',
      'dogu> /revoke',
      'Usage: /revoke <grant-id> (see "/grants")',
      'dogu> /revoke nope',
      'No grant "nope". Type "/grants" to list them.',
    ].join('\n'))
    expect(transcript).not.toMatch(/Type "help"/)
    expect(server!.requests).toHaveLength(0)
  })

  it('runs a bare "help" or "exit" as the command, not as a chat turn', async () => {
    const transcript = await chat('help\nhelp me\nexit\nhello\n')
    expect(transcript).toContain([
      'dogu> help',
      '  /list                                        list the tools',
      '  /defs <openai|anthropic|gemini|json> [name]  print tool definitions in a provider\'s format, as JSON',
    ].join('\n'))
    expect(transcript).toContain('  /exit                                        leave the playground (or end the input)\ndogu> help me\nmodel: ')
    // "help me" was a chat turn (a lookup of "me", then its summary); "exit" ended the session.
    expect(server!.requests).toHaveLength(2)
    expect(transcript).toMatch(/dogu> exit\n$/)
  })

  it('without a model, free text is an unknown command, as before', async () => {
    const transcript = await chat('hello\n/exit\n', { model: undefined })
    expect(transcript).toContain('dogu> hello\nUnknown command "hello". Type "help" for commands.\ndogu> /exit\n')
    expect(transcript).not.toContain('Chatting with')
  })

  it('reads the model from DOGU_BASE_URL, DOGU_MODEL and DOGU_API_KEY', () => {
    expect(modelFromEnv({ DOGU_BASE_URL: 'http://127.0.0.1:11434/v1', DOGU_MODEL: 'qwen3:8b' })).toEqual({ baseURL: 'http://127.0.0.1:11434/v1', model: 'qwen3:8b' })
    expect(modelFromEnv({ DOGU_BASE_URL: 'https://api.example/v1', DOGU_MODEL: 'm', DOGU_API_KEY: 'sk-1' })).toEqual({ baseURL: 'https://api.example/v1', model: 'm', apiKey: 'sk-1' })
    expect(modelFromEnv({ DOGU_MODEL: 'm' })).toBeUndefined()
  })
})

describe('the sloppy demo model', () => {
  it('sends each call broken a different way; the pipeline repairs it, and the playground says so', async () => {
    const transcript = await chat('capital of Japan\ncapital of France\ncapital of Japan\ncapital of France\ncapital of Japan\ncapital of France\n', {}, sloppyDemoModel)
    const japan = '  = lookup ok: Japan (日本, JP): capital Tokyo (东京)\nmodel: Done. The tool said: Japan (日本, JP): capital Tokyo (东京)'
    const france = '  = lookup ok: France (法国, FR): capital Paris (巴黎)\nmodel: Done. The tool said: France (法国, FR): capital Paris (巴黎)'
    expect(transcript).toContain(`  ~ lookup: the model's arguments were repaired (trailing-comma); it sent {"q":"Japan",}\n${japan}`)
    expect(transcript).toContain(`  ~ lookup: the model's arguments were repaired (quotes); it sent {'q':'France'}\n${france}`)
    expect(transcript).toContain(`  ~ lookup: the model's arguments were repaired (full-width); it sent {"q"："Japan"}\n${japan}`)
    expect(transcript).toContain(`  ~ lookup: the model's arguments were repaired (fence); it sent \`\`\`json\\n{"q":"France"}\\n\`\`\`\n${france}`)
    // A call written into the text: the markup is not shown, the call is read out, repaired and run.
    expect(transcript).toContain([
      'dogu> capital of Japan',
      'model: Let me look that up.',
      '  ~ lookup: the model wrote this call into its text; it was read out as a call',
      '  → lookup {"q":"Japan","limit":5}',
      '  ← lookup ok in # ms',
      '  ~ lookup: the model\'s arguments were repaired (trailing-comma); it sent {"q":"Japan",}',
      japan,
    ].join('\n'))
    expect(transcript).not.toContain('<tool_call>')
    // The sixth message starts the round again.
    expect(transcript.match(/repaired \(trailing-comma\)/g)).toHaveLength(3)
    // Every request, with the broken calls in its history, was one a strict endpoint accepts.
    expect(server!.requests.flatMap((request) => request.problems)).toEqual([])
    expect(SLOPPY_WAYS).toEqual(['trailing-comma', 'quotes', 'full-width', 'fence', 'text-call'])
  })
})

describe('yarn demo', () => {
  const entry = resolve(import.meta.dirname, '../lib/index.js')

  it('chats with the scripted model on loopback, with no network and no key', () => {
    expect(existsSync(entry), `${entry} is missing: run \`yarn build\` first (bash scripts/test.sh does)`).toBe(true)
    const child = spawnSync(process.execPath, [entry, '--demo'], {
      input: 'capital of France\n',
      encoding: 'utf8',
      timeout: 20_000,
      cwd: dir,
      env: { ...process.env, DOGU_BASE_URL: '', DOGU_MODEL: '', DOGU_API_KEY: '', DOGU_DATA: '' },
    })
    guardOutput(child.stdout, 'playground', { marker: '! ' })
    guardOutput(child.stderr, 'playground')
    expect(child.status).toBe(0)
    expect(child.stdout).toMatch(/^Chatting with dogu-demo at http:\/\/127\.0\.0\.1:\d+\/v1:/m)
    expect(child.stdout).toContain('model: Done. The tool said: France (法国, FR): capital Paris (巴黎)')
  })

  it('with --sloppy, sends broken calls and shows them repaired', () => {
    expect(existsSync(entry), `${entry} is missing: run \`yarn build\` first (bash scripts/test.sh does)`).toBe(true)
    const child = spawnSync(process.execPath, [entry, '--demo', '--sloppy'], {
      input: 'capital of France\n',
      encoding: 'utf8',
      timeout: 20_000,
      cwd: dir,
      env: { ...process.env, DOGU_BASE_URL: '', DOGU_MODEL: '', DOGU_API_KEY: '', DOGU_DATA: '' },
    })
    guardOutput(child.stdout, 'playground', { marker: '! ' })
    guardOutput(child.stderr, 'playground')
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('  ~ lookup: the model\'s arguments were repaired (trailing-comma); it sent {"q":"France",}\n')
    expect(child.stdout).toContain('model: Done. The tool said: France (法国, FR): capital Paris (巴黎)')
  })
})
