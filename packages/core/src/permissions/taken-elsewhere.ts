import type { AnswerResult } from './asker'

/**
 * Another instance's answer that ended a request here (its claim in a shared pending store):
 * who gave it, the instance that claimed it, and the reason the request ended with here.
 * Kept by a request so that an answer read here a moment later hears whose counted.
 */
export interface TakenElsewhere {
  by: string
  instance?: string
  reason?: string
}

/** What `AskerContext.elsewhere` says of it: who answered, and where. */
export function elsewhereOf(taken: TakenElsewhere | undefined): { by: string; instance?: string } | undefined {
  return taken && (taken.instance ? { by: taken.by, instance: taken.instance } : { by: taken.by })
}

/** What a later answer to the request hears: `taken`, by whom. */
export function takenResult(taken: TakenElsewhere): AnswerResult {
  return { status: 'taken', by: taken.by, open: false, ...(taken.reason ? { reason: taken.reason } : {}) }
}
