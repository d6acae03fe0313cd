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

/**
 * Who may answer a request: anyone who meets one of its parts. The engine's policy (no rule
 * `approvers`) is the caller and `authority`; an ask rule's `approvers` set `users`,
 * `permissions` and/or `authority` instead. No `userId` means the caller may not answer as
 * the caller: an asker should bring the question to where an approver sees it.
 */
export interface ApproverPolicy {
  /** The caller's id, when the caller may answer. */
  userId?: string
  /** The caller's platform (set whether or not the caller may answer). */
  platform?: string
  /** Anyone at or above this authority. Absent when a rule's approvers name no authority. */
  authority?: number
  /** A rule's approving users: plain ids (any platform) or `platform:id`. */
  users?: readonly string[]
  /** A rule's host permission names; a person counts when their asker attests one (`Approver.permissions`). */
  permissions?: readonly string[]
}
