import type { LogGuard } from '../../test-support/log-guard'

// Warnings a scenario provokes on purpose, declared optional (a run may or may not provoke
// them). Anything else logged as a warning or an error still fails the test; errors are also
// an I4 violation of the run that logged them.
export function expectHarnessWarnings(guard: LogGuard): void {
  // The scripted approver answers as the caller; an ask rule's `approvers` may leave them out.
  guard.expect(/ignored an answer from test:u1/, { optional: true })
}
