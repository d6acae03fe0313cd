/** How long an `allow` answer lasts. `once` (the default) covers only the request answered. */
export type AskScope = 'once' | 'session' | 'always'

/**
 * Who answered. Askers report it from what their host knows (a chat platform's user id
 * and authority); the engine decides whether that person may answer.
 */
export interface Approver {
  id: string
  platform?: string
  authority?: number
  /**
   * Host permissions (Koishi permission names) the asker checked this person holds, among
   * the request's `approvers.permissions`: the asker attests them, as it does `authority`.
   * A name the policy does not list counts for nothing.
   */
  permissions?: string[]
}

/** How a person answered; askers name their channel, any other string is kept as given. */
export type AnswerVia = 'text' | 'button' | 'console' | 'mcp' | 'terminal' | (string & {})
