// CodedErrorClass is named so that the emitted declarations reach it through @dogu/core, a
// dependency of this package, not through @dogu/schema, which is not one.
import { codedError, type CodedErrorClass } from '@dogu/core'

/**
 * Why `http_fetch` did not return a response: a refused address, a bad URL, a timeout.
 * Thrown from `run`; the pipeline reports it as an `error` result the model reads. An
 * HTTP error status is not one of these: a 404 is a normal result.
 */
export class HttpFetchError extends codedError('HttpFetchError', {
  INVALID_URL: 'the URL cannot be parsed',
  INVALID_REQUEST: 'the request is inconsistent (a body on GET or HEAD)',
  UNSUPPORTED_PROTOCOL: 'only http and https URLs can be fetched',
  ADDRESS_REFUSED: 'the host resolves to an address that is not public',
  RESOLVE_FAILED: 'the host name could not be resolved',
  TOO_MANY_REDIRECTS: 'the redirect limit was reached',
  REDIRECT_REFUSED: 'a redirect would resend a request body to another origin',
  CONTENT_TYPE_REFUSED: 'the response content type is not allowed',
  TIMEOUT: 'the request took longer than the timeout',
  FETCH_FAILED: 'the connection or the request failed',
  INVALID_OPTIONS: 'invalid options',
}) {}

export namespace HttpFetchError {
  export type Code = keyof typeof HttpFetchError.Code
}
