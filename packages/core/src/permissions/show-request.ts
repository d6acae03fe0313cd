import type { AskAnswer, Asker, AskerContext, PermissionRequest } from './asker'

/**
 * Shows a request to one asker: an answer it returns (at once or later) goes to `answered`,
 * a throw or a rejection to `failed`. Whoever ends the request aborts `context.signal`; an
 * answer that arrives after that is for `answered` to refuse.
 */
export function showRequest(
  asker: Asker,
  request: Readonly<PermissionRequest>,
  context: AskerContext,
  answered: (answer: AskAnswer) => void,
  failed: (error: unknown) => void,
): void {
  let returned: ReturnType<Asker>
  try {
    returned = asker(request, context)
  } catch (error) {
    failed(error)
    return
  }
  if (returned && typeof (returned as Promise<unknown>).then === 'function') {
    ;(returned as Promise<AskAnswer | void>).then(
      (answer) => { if (answer && !context.signal.aborted) answered(answer) },
      failed,
    )
  } else if (returned) {
    answered(returned as AskAnswer)
  }
}
