/** What a call may change: nothing, files, or anything (a process, a payment). */
export type Effect = 'read' | 'write' | 'exec'

/** A permission a call needs: a name (`tool:deploy`, `fs.write`) and an optional target. */
export interface PermissionSpec {
  name: string
  target?: string
  /**
   * What this particular call may change, when it differs from `traits.effect`: a shell
   * tool classifies `git status` as `read` and `rm -rf build` as `exec`.
   */
  effect?: Effect
  /** Why this call needs approval, shown on the ask card (`it writes to ../out.txt`). */
  reason?: string
  /**
   * The call will run inside an OS sandbox: the kernel confines what it can reach. Rules
   * match it with `sandboxed: true`; a call that does not claim it (`false` or unset)
   * counts as unsandboxed, so `sandboxed: false` rules catch it.
   */
  sandboxed?: boolean
}
