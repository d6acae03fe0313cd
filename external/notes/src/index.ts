import { defineTool, type Tool } from '@dogu/core'
import type { Context } from 'cordis'
import { resolve } from 'node:path'
import Schema from 'schemastery'
import { type Note, NotesStore } from './notes-store'

export * from './notes-store'

/** What this plugin needs of its host: `ctx.tools.define`, as `@dogu/cordis` provides it. */
export interface ToolHost {
  define(tool: Tool): () => void
}

export const name = 'notes'
export const inject = ['tools']

export interface Config {
  /** Folder for `notes.json`; unset keeps notes in memory only. */
  dataDir?: string
  /** Most notes one session may keep. */
  maxNotes: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  dataDir: Schema.string().description('Folder for notes.json. Unset: notes live in memory and are lost on restart.'),
  maxNotes: Schema.natural().min(1).default(100).description('Most notes one session may keep.'),
})

const actions = ['add', 'list', 'delete'] as const

/**
 * Defines the `notes` tool: add, list and delete short notes, kept per session. Adding and
 * deleting write (they need permission); listing only reads.
 */
export async function apply(ctx: Context & { tools: ToolHost }, config: Config) {
  const store = new NotesStore(config.dataDir ? resolve(config.dataDir, 'notes.json') : undefined, config.maxNotes)
  await store.load()
  // Let the last write land before the plugin is gone (reload, shutdown).
  ctx.effect(() => () => store.flush(), 'notes: flush')

  // Declared before defineTool, so `run` gets typed arguments (see docs/getting-started.md).
  const args = Schema.object({
    action: Schema.union(actions).required().description('What to do'),
    text: Schema.string().min(1).max(2_000).description('The note, for "add"'),
    id: Schema.natural().min(1).description('The note number, for "delete"'),
  })
  ctx.tools.define(defineTool({
    name: 'notes',
    description: 'Keep short notes for this conversation: "add" a note (text), "list" them, or "delete" one (id).',
    args,
    // Listing reads; adding and deleting change what is stored.
    permission: ({ action }) => ({ name: 'notes', target: action, effect: action === 'list' ? 'read' : 'write' }),
    traits: { effect: 'write', timeout: 10_000 },
    run: async ({ action, text, id }, call) => {
      const session = call.session.id
      if (action === 'list') {
        const notes = store.list(session)
        return { text: notes.length ? notes.map(format).join('\n') : 'No notes yet.', data: notes }
      }
      if (action === 'add') {
        if (text === undefined) throw new Error('"add" needs a text: { "action": "add", "text": "..." }')
        const note = await store.add(session, text)
        return { text: `Added note #${note.id}.`, data: note }
      }
      if (id === undefined) throw new Error('"delete" needs the note id: { "action": "delete", "id": 1 }')
      const note = await store.delete(session, id)
      return { text: `Deleted note #${note.id}.`, data: note }
    },
  }))
}

function format(note: Note): string {
  return `#${note.id} ${note.text}`
}
