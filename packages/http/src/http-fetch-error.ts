/**
 * Why `http_fetch` did not return a response: a refused address, a bad URL, a timeout.
 * Thrown from `run`; the pipeline reports it as an `error` result the model reads. An
 * HTTP error status is not one of these: a 404 is a normal result.
 */
export class HttpFetchError extends Error {
  override name = 'HttpFetchError'

  constructor(public code: HttpFetchError.Code, message: string, options?: ErrorOptions) {
    super(message, options)
  }

  static is(error: unknown, code?: HttpFetchError.Code): error is HttpFetchError {
    return error instanceof HttpFetchError && (!code || error.code === code)
  }
}

export namespace HttpFetchError {
  export const Code = {
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
  } as const
  export type Code = keyof typeof Code
}
