import { PermissionError } from './permission-error'
import { isPermissionMode, PERMISSION_MODES, type PermissionMode } from './permission-modes'

/** The mode of each session that has one of its own, and the mode of all the others. */
export class SessionModes {
  private modes = new Map<string, PermissionMode>()

  constructor(private readonly fallback: PermissionMode) {
    checkMode(fallback)
  }

  of(sessionId: string): PermissionMode {
    return this.modes.get(sessionId) ?? this.fallback
  }

  /** `undefined` returns the session to the fallback. */
  set(sessionId: string, mode: PermissionMode | undefined): void {
    if (mode === undefined) return void this.modes.delete(sessionId)
    checkMode(mode)
    this.modes.set(sessionId, mode)
  }
}

function checkMode(mode: unknown): asserts mode is PermissionMode {
  if (!isPermissionMode(mode)) throw new PermissionError('INVALID_MODE', `mode must be one of ${Object.keys(PERMISSION_MODES).join(', ')}, got ${JSON.stringify(mode)}`)
}
