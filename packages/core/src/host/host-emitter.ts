/**
 * Emits one of the runtime's events (`tools/call-end`, `permissions/decision`, …) on a
 * host's event bus; never throws. A host builds it once per service, reading its bus past
 * whatever makes each emit dear (Cordis' context proxy), and passes it to the engines.
 */
export interface HostEmitter {
  (name: string, ...args: unknown[]): void
  /** False when nobody listens to `name`, so the event need not even be built. */
  listens(name: string): boolean
}
