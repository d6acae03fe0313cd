import type { Denial } from './types/denial'

/**
 * Thrown by `call.deny(reason)` and by a refused `call.ask(reason)`; the pipeline turns it
 * into a `denied` result. Tools may catch it to clean up, and should rethrow it.
 */
export class ToolDenial extends Error {
  override name = 'ToolDenial'

  constructor(
    public reason: string,
    /** The structured form of `reason`, when the pipeline refused a `call.ask` (who declined, the timeout). */
    public denial?: Denial,
  ) {
    super(reason)
  }
}
