import { writeFileAtomically } from '@dogu/core'
import { readFile } from 'node:fs/promises'

/** One note of one session. */
export interface Note {
  id: number
  text: string
  createdAt: string
}

/** A store failure a developer must fix (a corrupt file), not something to paper over. */
export class NotesError extends Error {
  override name = 'NotesError'

  constructor(public code: NotesError.Code, message: string, options?: ErrorOptions) {
    super(message, options)
  }
}

export namespace NotesError {
  export const Code = {
    CORRUPT_FILE: 'the notes file is not what this plugin wrote',
    LIMIT: 'the session has as many notes as allowed',
    NOT_FOUND: 'no note with this id',
  } as const
  export type Code = keyof typeof Code
}

/**
 * Notes per session, in memory, optionally mirrored to a JSON file. Writes are chained, so
 * the file always holds a complete snapshot; `flush()` waits for the last one.
 */
export class NotesStore {
  // Session ids come from hosts and models: a Map, never a plain object.
  private sessions = new Map<string, Note[]>()
  private writing: Promise<void> = Promise.resolve()

  constructor(private file?: string, private maxNotes = 100) {}

  /** Reads the file, if any. A missing file is an empty store; a corrupt one is an error. */
  async load(): Promise<void> {
    if (!this.file) return
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      throw new NotesError('CORRUPT_FILE', `${this.file} is not valid JSON; fix or remove it`, { cause: error })
    }
    if (!isSnapshot(parsed)) throw new NotesError('CORRUPT_FILE', `${this.file} is not a notes file; fix or remove it`)
    this.sessions = new Map(parsed.sessions)
  }

  list(session: string): readonly Note[] {
    return this.sessions.get(session) ?? []
  }

  /** Adds a note; resolves once it is saved (rejects if the file cannot be written). */
  async add(session: string, text: string): Promise<Note> {
    const notes = this.sessions.get(session) ?? []
    if (notes.length >= this.maxNotes) {
      throw new NotesError('LIMIT', `this session already has ${notes.length} notes, the most allowed; delete one first`)
    }
    const note: Note = { id: (notes.at(-1)?.id ?? 0) + 1, text, createdAt: new Date().toISOString() }
    this.sessions.set(session, [...notes, note])
    await this.save()
    return note
  }

  /** Deletes a note; resolves once the change is saved. */
  async delete(session: string, id: number): Promise<Note> {
    const notes = this.sessions.get(session) ?? []
    const note = notes.find((note) => note.id === id)
    if (!note) throw new NotesError('NOT_FOUND', `there is no note #${id} in this session`)
    const rest = notes.filter((other) => other !== note)
    if (rest.length) this.sessions.set(session, rest)
    else this.sessions.delete(session)
    await this.save()
    return note
  }

  /** Resolves once every change so far is on disk. */
  flush(): Promise<void> {
    return this.writing
  }

  private save(): Promise<void> {
    if (!this.file) return Promise.resolve()
    const file = this.file
    const snapshot = JSON.stringify({ version: 1, sessions: [...this.sessions] }, null, 2)
    const write = this.writing.then(() => writeFileAtomically(file, snapshot))
    // One failed write must not block the ones after it; its caller sees the error.
    this.writing = write.catch(() => {})
    return write
  }
}

interface Snapshot {
  version: 1
  sessions: [string, Note[]][]
}

function isSnapshot(value: unknown): value is Snapshot {
  if (!value || typeof value !== 'object') return false
  const { version, sessions } = value as Snapshot
  return version === 1 && Array.isArray(sessions) && sessions.every((entry) =>
    Array.isArray(entry) && typeof entry[0] === 'string' && Array.isArray(entry[1]) && entry[1].every(isNote))
}

function isNote(value: unknown): value is Note {
  const note = value as Note
  return !!note && typeof note.id === 'number' && typeof note.text === 'string' && typeof note.createdAt === 'string'
}
