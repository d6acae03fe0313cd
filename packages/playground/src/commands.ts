import { type Grant, isPermissionMode, PERMISSION_MODES, type Session, toolDefinition } from '@dogu/core'
import type { Context } from 'cordis'
import { AUDIT_USAGE, auditCommand } from './audit-command'

/** What a command may use of the running playground. */
export interface CommandScope {
  ctx: Context
  session: Session
  print(text: string): void
  /** Ids for the calls typed at the prompt. */
  nextCallId(): string
  /** What commands start with at this prompt: `/` when chatting with a model (`/grants`), otherwise nothing. */
  prefix: '' | '/'
  /** The playground's data folder (`--data`): where `audit --export` writes. */
  dataDir: string
  /** Aborts when the person presses Ctrl-C while the command runs. */
  signal: AbortSignal
}

export interface Command {
  usage: string
  summary: string
  /** Returns `'exit'` to end the session. */
  run(args: string, scope: CommandScope): void | 'exit' | Promise<void>
}

const dialects = ['openai', 'anthropic', 'gemini', 'json'] as const
type Dialect = typeof dialects[number]
const modes = Object.keys(PERMISSION_MODES)

/** One line per grant: `grant_…  session  notes on add  (tool notes, by terminal:u1)`. */
function describeGrant(grant: Grant): string {
  const target = grant.target === undefined ? '' : ` on ${grant.target}`
  return `${grant.id}  ${grant.scope.padEnd(7)}  ${grant.permission}${target}  (tool ${grant.tool}, by ${grant.by})`
}

/** The prompt's commands, by name. */
export const commands = new Map<string, Command>([
  ['list', {
    usage: 'list',
    summary: 'list the tools',
    run(_, { ctx, print }) {
      const tools = ctx.tools.list()
      if (!tools.length) return print('No tools are defined.')
      const width = Math.max(...tools.map((tool) => tool.name.length))
      // The first line only: the rest of a description is for the model.
      for (const tool of tools) print(`${tool.name.padEnd(width)}  ${`[${tool.traits.effect}]`.padEnd(7)}  ${tool.description.trim().split('\n', 1)[0].trim()}`)
    },
  }],
  ['defs', {
    usage: 'defs <openai|anthropic|gemini|json> [name]',
    summary: 'print tool definitions in a provider\'s format, as JSON',
    run(args, { ctx, session, print }) {
      const [dialect, name] = args.split(/\s+/).filter(Boolean)
      if (!dialects.includes(dialect as Dialect)) return print(`Usage: defs <${dialects.join('|')}> [name]`)
      const toolset = ctx.tools.toolset({ session })
      if (!name) return print(JSON.stringify(toolset.definitions(dialect as Dialect), null, 2))
      const tool = toolset.get(name)
      if (!tool) return print(`No tool named "${name}". Tools: ${toolset.names.join(', ') || '(none)'}.`)
      print(JSON.stringify(toolDefinition(tool, dialect as Dialect), null, 2))
    },
  }],
  ['call', {
    usage: 'call <name> [json-args]',
    summary: 'run a call through a toolset and print its result',
    async run(args, { ctx, session, print, nextCallId, signal }) {
      const match = /^(\S+)\s*([\s\S]*)$/.exec(args)
      if (!match) return print('Usage: call <name> [json-args], e.g. call lookup {"q":"Paris"}')
      const [, name, json] = match
      // The text goes to the pipeline as the model would send it: bad JSON is its to report.
      // Ctrl-C cancels it: the call ends `cancelled` at once, whatever the tool is doing.
      const [result] = await ctx.tools.toolset({ session }).execute([{ id: nextCallId(), name, arguments: json.trim() || '{}' }], { signal })
      print(JSON.stringify(result, null, 2))
    },
  }],
  ['grants', {
    usage: 'grants',
    summary: 'list remembered "session" and "always" approvals',
    run(_, { ctx, print }) {
      const grants = ctx.permissions.grants()
      if (!grants.length) return print('No grants.')
      for (const grant of grants) print(describeGrant(grant))
    },
  }],
  ['revoke', {
    usage: 'revoke <grant-id>',
    summary: 'forget a grant (a unique start of its id will do)',
    run(args, { ctx, print, prefix }) {
      const id = args.trim()
      if (!id) return print(`Usage: ${prefix}revoke <grant-id> (see "${prefix}grants")`)
      const matches = ctx.permissions.grants().filter((grant) => grant.id.startsWith(id))
      const exact = matches.find((grant) => grant.id === id)
      if (!exact && matches.length > 1) return print(`"${id}" starts ${matches.length} grant ids; type more of it.`)
      const grant = exact ?? matches[0]
      if (!grant || !ctx.permissions.revoke(grant.id)) return print(`No grant "${id}". Type "${prefix}grants" to list them.`)
      print(`Revoked ${describeGrant(grant)}`)
    },
  }],
  ['mode', {
    usage: `mode [${modes.join('|')}]`,
    summary: 'show or set this session\'s permission mode',
    run(args, { ctx, session, print }) {
      const mode = args.trim()
      if (mode) {
        if (!isPermissionMode(mode)) return print(`Usage: mode [${modes.join('|')}]`)
        ctx.permissions.setMode(session.id, mode)
      }
      print(`Mode: ${ctx.permissions.modeOf(session.id)}`)
    },
  }],
  ['audit', {
    usage: AUDIT_USAGE,
    summary: 'the newest audit records (-n count, default 20); --export writes them to a JSONL file',
    run: (args, scope) => auditCommand(args, scope),
  }],
  ['help', {
    usage: 'help',
    summary: 'show this help',
    run(_, { print, prefix }) {
      const width = Math.max(...[...commands.values()].map((command) => command.usage.length)) + prefix.length
      for (const command of commands.values()) print(`  ${(prefix + command.usage).padEnd(width)}  ${command.summary}`)
    },
  }],
  ['exit', {
    usage: 'exit',
    summary: 'leave the playground (or end the input)',
    run: () => 'exit',
  }],
])
