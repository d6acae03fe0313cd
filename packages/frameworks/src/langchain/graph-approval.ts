import type { AskScope } from '@dogu/core'
import type { RunnableConfig } from '@langchain/core/runnables'

/**
 * What a Dogu tool passes to LangGraph's `interrupt()` when Dogu's rules ask a person: the
 * graph's result carries it as `__interrupt__[i].value`, for the app to show its user. Plain
 * data, so a checkpointer keeps it with the thread.
 */
export interface ApprovalInterrupt {
  /** Tells Dogu's questions from a graph's other interrupts. */
  type: 'dogu/approval'
  /** The model's tool call id, which is Dogu's call id and the audit record's `callId`. */
  callId: string
  tool: string
  /** The call in one line, secrets masked: `deploy(env=prod) — tool:deploy prod`. */
  summary: string
  /** The arguments as the model sent them, secret fields (`.role('secret')`) masked. */
  args: unknown
  /** The permission asked about. */
  permission: { name: string; target?: string }
  /** Why a person is asked: the rule or default that asks. */
  reason?: string
  /** The Dogu session (the thread) the call belongs to. */
  session: string
}

/**
 * The answer to an `ApprovalInterrupt`, given as `new Command({ resume })`. Dogu checks it
 * like any approver's answer when the call is made (a rule that denies by then still wins).
 *
 * @example await graph.invoke(new Command({ resume: { approved: true, scope: 'session' } }), config)
 */
export interface ApprovalResume {
  approved: boolean
  /** `session` or `always` also remember the yes as a grant. @default the approver's scope, else 'once' */
  scope?: AskScope
  /** Shown to the model with a refusal. */
  reason?: string
}

/** Whether `value` (an interrupt's value) is one of Dogu's questions. */
export function isApprovalInterrupt(value: unknown): value is ApprovalInterrupt {
  return !!value && typeof value === 'object' && (value as { type?: unknown }).type === 'dogu/approval'
}

/**
 * Whether the tool runs inside a LangGraph task that can interrupt: LangGraph puts its
 * checkpointer on every task's config, and `interrupt()` refuses to run without one
 * (MISSING_CHECKPOINTER). Outside a graph the key is absent, and LangGraph is never loaded.
 */
export function canInterrupt(config: RunnableConfig): boolean {
  return !!config.configurable?.__pregel_checkpointer
}

/**
 * Puts the question to the graph's user: the first time, LangGraph's `interrupt()` throws
 * to pause the graph (the run returns with `__interrupt__`); when the graph is resumed, the
 * node runs again and the same `interrupt()` returns the resume value. LangGraph is imported
 * here, on the first question, so an app without it can use the tools outside graphs.
 */
export async function askInGraph(question: ApprovalInterrupt): Promise<ApprovalResume> {
  const { interrupt } = await import('@langchain/langgraph')
  return resumeOf(interrupt(question))
}

const SCOPES: ReadonlySet<unknown> = new Set<AskScope>(['once', 'session', 'always'])

/** The resume value as an `ApprovalResume`; anything else is the app's mistake, said at once. */
function resumeOf(value: unknown): ApprovalResume {
  const resume = value as Partial<ApprovalResume> | null
  if (!resume || typeof resume !== 'object' || typeof resume.approved !== 'boolean'
    || (resume.scope !== undefined && !SCOPES.has(resume.scope))
    || (resume.reason !== undefined && typeof resume.reason !== 'string')) {
    throw new TypeError(`@dogu/frameworks/langchain: resume a Dogu approval with new Command({ resume: { approved: boolean, scope?: 'once' | 'session' | 'always', reason?: string } }), got ${JSON.stringify(value)}`)
  }
  return resume as ApprovalResume
}
