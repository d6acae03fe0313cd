import { codedError, type RevisionRefusal } from '@dogu/core'

/** What the console's API refuses, with the HTTP status each code answers with. */
export class ConsoleError extends codedError('ConsoleError', {
  UNKNOWN_METHOD: 'no such console method',
  METHOD_NOT_ALLOWED: 'this method changes state and is only accepted by POST',
  INVALID_PAYLOAD: 'the payload does not match the method\'s schema',
  NOT_FOUND: 'no such tool, question, task, grant or change',
  INVALID_EDIT: 'the edited arguments of a question are refused',
  INVALID_FORM: 'the values given for a tool\'s form are refused',
  NOT_ALLOWED: 'this person may not give this answer',
  REFUSED: 'the answer to a question asked again after a restart did not count: answered first elsewhere, denied now, or not runnable here',
  UNAVAILABLE: 'the service this method needs is not loaded',
  UNAUTHORIZED: 'the request lacks the console token',
  FORBIDDEN: 'the request comes from another site or names another host',
  INVALID_AUTHORIZATION: 'no authorization with this state is under way for this operator',
  AUTHORIZATION_FAILED: 'the authorization could not be started or completed',
}) {}

export namespace ConsoleError {
  export type Code = keyof typeof ConsoleError.Code
}

/**
 * An edit the console refused, with why in the structured form (`refusal`) a page renders in
 * its locale (`describeRevision`); `message` is the same in English. Sent as the error's
 * `refusal`.
 */
export function refusedEdit(why: string, refusal?: RevisionRefusal): ConsoleError & { refusal?: RevisionRefusal } {
  return Object.assign(new ConsoleError('INVALID_EDIT', why), refusal ? { refusal } : {})
}

/** The error as the console's transports send it: its code, message and, for a refused edit, its refusal. */
export function errorBody(error: ConsoleError): { code: string; message: string; refusal?: RevisionRefusal } {
  const { refusal } = error as { refusal?: RevisionRefusal }
  return { code: error.code, message: error.message, ...(refusal ? { refusal } : {}) }
}

/** HTTP status per code. */
export const HTTP_STATUS: Readonly<Record<ConsoleError.Code, number>> = Object.freeze({
  UNKNOWN_METHOD: 404,
  METHOD_NOT_ALLOWED: 405,
  INVALID_PAYLOAD: 400,
  NOT_FOUND: 404,
  INVALID_EDIT: 422,
  INVALID_FORM: 422,
  NOT_ALLOWED: 403,
  REFUSED: 409,
  UNAVAILABLE: 503,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  INVALID_AUTHORIZATION: 400,
  AUTHORIZATION_FAILED: 502,
})
