import type { EditKind } from './scenario'

// The edits a scripted person makes to a call before approving it, one per kind and tool:
// valid (a field the schema names, same permission), an unknown (misspelled) key, a value the
// schema refuses, and one that changes the permission's target.

/** The edit each kind makes to a tool's arguments, from what the approver was shown. */
export function editFor(tool: string, kind: EditKind, shown: Record<string, unknown>): Record<string, unknown> {
  const edits: Record<string, Record<EditKind, Record<string, unknown>>> = {
    deploy: { 'valid': { ref: 'edited' }, 'unknown-key': { Env: 'staging' }, 'invalid': { env: 'moon' }, 'permission': { env: shown.env === 'prod' ? 'staging' : 'prod' } },
    note: { 'valid': { text: 'edited' }, 'unknown-key': { Count: 2 }, 'invalid': { count: 9 }, 'permission': { count: 3 } },
    peek: { 'valid': { q: 'edited' }, 'unknown-key': { Q: 'x' }, 'invalid': { q: 5 }, 'permission': { q: 'y' } },
    write: { 'valid': { content: 'edited' }, 'unknown-key': { Path: '.git/config' }, 'invalid': { path: 5 }, 'permission': { path: '.git/config' } },
    edit: { 'valid': { newText: 'edited' }, 'unknown-key': { NewText: 'x' }, 'invalid': { oldText: 5 }, 'permission': { path: '.env' } },
    bash: { 'valid': { timeout: 5_000 }, 'unknown-key': { Command: 'echo x >> .git/config' }, 'invalid': { command: 5 }, 'permission': { command: 'echo x >> .git/config' } },
  }
  return edits[tool]?.[kind] ?? {}
}
