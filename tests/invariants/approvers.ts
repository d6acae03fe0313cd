import { type AskAnswer, type Asker, type DecisionEvent, maskSecrets, type ModelToolCall, type PermissionRequest, repairArguments, secretPaths, type Toolset } from '@dogu/core'
import type { ChatChannel } from './chat-channel'
import { type ApproverAction, type Observations, serialize } from './channels'
import { editFor } from './edits'
import type { Answer } from './scenario'

// The three ways a scripted person answers a question: as an asker of the engine (the answer
// handed to `respond`); in the Koishi chat, reading the bot's question in the channel and
// replying there as a user of the mock platform (`y 1`, `s 1`, `n 1`, `e 1 {json}`), so the
// chat's own parser, its checks and its replies are what the run goes through; or as an agent
// framework's user (@dogu/frameworks), shown the calls `toolset.decide` would ask about and
// answering before the calls are made. Each does what `Answer` says, and each calls
// `beforeAnswer` first, between the question and the answer.

/** A question as the person saw it: the call's id, its tool and its arguments (secret fields masked). */
export type ShownCall = Pick<PermissionRequest, 'callId' | 'tool' | 'args'>

/**
 * What happens between the question and the answer: a third party's change to the file, a
 * look at the console, at the pending store. `request` is the engine's question, when the
 * engine asked one (a framework's user is asked before the call is made: there is none).
 */
export type BeforeAnswer = (shown: ShownCall, request?: Readonly<PermissionRequest>) => Promise<void>

/** The answering person as the caller: the same user in both variants (test:u1, or mock:u1 in chat). */
export const caller = { id: 'u1', platform: 'test', authority: 1 }

/** Every question shown to the askers, as they get it: what a person sees, and what I1 compares with what ran. */
export function recordQuestion(request: Readonly<PermissionRequest>, observations: Observations): void {
  observations.questions.push(serialize(request))
  observations.asked.push(request)
}

/** The asker variant: answers each question through `respond`, as `caller`. */
export function scriptedAsker(answer: Answer, observations: Observations, controller: AbortController, beforeAnswer: BeforeAnswer): Asker {
  return async (request, { respond }) => {
    recordQuestion(request, observations)
    const action: ApproverAction = { callId: request.callId, tool: request.tool, answer: answer.kind }
    observations.approver.push(action)
    await beforeAnswer(request, request)
    if (answer.kind === 'silent') return
    if (answer.kind === 'cancel') return void controller.abort()
    if (answer.kind === 'deny') return void (action.verdict = respond({ decision: 'deny', by: caller }))
    if (answer.kind === 'allow') return void (action.verdict = respond({ decision: 'allow', scope: answer.scope, by: caller }))
    // Chat's `e {json}`: merged key by key over the arguments shown.
    const shown = (request.input?.initial ?? request.args ?? {}) as Record<string, unknown>
    action.value = { ...shown, ...editFor(request.tool, answer.edit, shown) }
    action.verdict = respond({ decision: 'allow', by: caller, value: action.value })
    // A refused edit: the person gives up, and says no.
    if (action.verdict !== 'accepted') respond({ decision: 'deny', by: caller, reason: 'the edit was refused' })
  }
}

// The first line of a question in the channel's language (zh-CN, Koishi's default):
// `[1] 工具 deploy 请求批准：deploy(env=prod)` (packages/koishi/src/locales/zh-CN.ts).
const QUESTION = /^\[(\d+)\] 工具 (\S+) 请求批准：(.*)$/m
// The reply to an accepted edit ends with the call as it runs: `实际运行的参数：{"env":"staging",…}`.
const RUNS_WITH = /实际运行的参数：(\{.*\})$/

/**
 * The chat variant: a passive asker records each question (as every asker gets it), and the
 * person answers the bot's post of it in the channel. `settled()` waits for every answer
 * the person is still giving.
 */
export function chatPerson(channel: ChatChannel, answer: Answer, observations: Observations, controller: AbortController, beforeAnswer: BeforeAnswer) {
  const pending: Promise<void>[] = []
  const answered = new Set<string>()
  const problems: string[] = []

  async function reply(post: string) {
    const match = QUESTION.exec(post)
    if (!match) return
    const [, number, tool, summary] = match
    const request = observations.asked.find((item) => item.tool === tool && item.summary === summary && !answered.has(item.id))
    if (!request) return void problems.push(`the bot asked about ${tool} ${summary}, which no asker was asked about`)
    answered.add(request.id)
    const action: ApproverAction = { callId: request.callId, tool, answer: answer.kind }
    observations.approver.push(action)
    // Numbers are reused once a question closes: a question that expired while the person
    // was slow (a loaded machine) is not answered, lest `y 1` land on the next question 1.
    const open = () => !observations.decisions.some((event) => event.requestId === request.id && event.phase === 'approve')
    const say = async (text: string) => {
      if (open()) return channel.say(text)
      action.verdict = 'closed'
      return []
    }
    await beforeAnswer(request, request)
    if (answer.kind === 'silent') return
    if (answer.kind === 'cancel') return void controller.abort()
    if (answer.kind === 'deny') return void await say(`n ${number}`)
    if (answer.kind === 'allow') return void await say(`${answer.scope === 'session' ? 's' : 'y'} ${number}`)
    // What the person sees of the arguments is what the chat merges the edit over.
    const shown = (request.input?.initial ?? request.args ?? {}) as Record<string, unknown>
    const changes = editFor(tool, answer.edit, shown)
    action.value = { ...shown, ...changes }
    const [said] = await say(`e ${number} ${JSON.stringify(changes)}`)
    if (action.verdict === 'closed') return
    const decided = observations.decisions.some((event: DecisionEvent) => event.requestId === request.id && event.source.kind === 'answer' && event.source.edited)
    action.verdict = decided ? 'accepted' : 'refused'
    const echo = said && RUNS_WITH.exec(said)
    if (echo) action.echo = JSON.parse(echo[1])
    if (!decided) await say(`n ${number}`)
  }

  channel.onPost((post) => { pending.push(reply(post)) })
  return {
    asker: ((request) => { recordQuestion(request, observations) }) as Asker,
    /** Resolves when the person has said all they will; throws when a post could not be matched to a question. */
    async settled() {
      await Promise.all(pending)
      if (problems.length) throw new Error(problems.join('\n'))
    },
  }
}

/** How the framework names itself in the answers it brings: the audit record's `via`. */
export const FRAMEWORK_VIA = 'ai-sdk'

/**
 * The framework variant, as @dogu/frameworks' adapters do it (packages/frameworks/src/ai-sdk):
 * no asker is registered by the person; each call is first put to `toolset.decide` (the
 * framework's `needsApproval`), and one it would ask about is shown to the person as the
 * framework's approval request shows it, the tool and its arguments (Dogu's secret fields
 * masked). Their answer becomes that call's `answers` entry for `execute`. Everything
 * `decide` said is kept for I2 (`observations.framework`). Returns each call's answer, by
 * index: `undefined` for a call not asked about, or whose person said nothing.
 */
export async function frameworkAnswers(toolset: Toolset, calls: readonly ModelToolCall[], answer: Answer, observations: Observations, controller: AbortController, beforeAnswer: BeforeAnswer): Promise<(AskAnswer | undefined)[]> {
  const answers: (AskAnswer | undefined)[] = []
  for (const call of calls) {
    const decision = await toolset.decide(call)
    observations.framework.push(serialize({ callId: call.id, ...decision }))
    // A cancelled run asks nobody: its calls end cancelled.
    if (decision.decision !== 'ask' || controller.signal.aborted) {
      answers.push(undefined)
      continue
    }
    const shown: ShownCall = { callId: call.id, tool: decision.tool, args: shownArguments(toolset, call, decision.tool) }
    observations.questions.push(serialize(shown))
    // A framework's approval is a yes or a no (the AI SDK's `approved`, an OpenAI Agents
    // approve or reject): it has no edit. A person who would edit lets the call run, so an
    // edit is a yes, once; it is recorded as `allow`, so I1 holds the run to the decision of
    // exactly its arguments. Keeping the answer arbitrary the same for every variant keeps
    // the shrinking the same.
    const kind = answer.kind === 'edit' ? 'allow' : answer.kind
    observations.approver.push({ callId: call.id, tool: decision.tool, answer: kind, framework: true })
    await beforeAnswer(shown)
    if (kind === 'cancel') {
      controller.abort()
      answers.push(undefined)
    } else if (kind === 'allow') {
      answers.push({ decision: 'allow', scope: answer.kind === 'allow' ? answer.scope : 'once', by: caller, via: FRAMEWORK_VIA })
    } else if (kind === 'deny') {
      answers.push({ decision: 'deny', by: caller, via: FRAMEWORK_VIA, reason: 'not this one' })
    } else {
      // Silence: no answer is given, so the call reaches the engine's own askers (the
      // console, when loaded), or none, and is denied.
      answers.push(undefined)
    }
  }
  return answers
}

/**
 * The arguments as the framework shows them: what the model sent, read as JSON (repaired
 * by Dogu's repair, as the adapters' `repairToolCall` does, when it is not), secret fields
 * masked by the tool's schema.
 */
function shownArguments(toolset: Toolset, call: ModelToolCall, tool: string): unknown {
  let value: unknown = call.arguments
  if (typeof value === 'string') {
    const text = value
    try {
      value = JSON.parse(text)
    } catch {
      const repaired = repairArguments(text)
      // `decide` asks only about arguments that parse or repair: this is the harness's mistake.
      if (!('value' in repaired)) throw new Error(`decide() asked about ${tool} ${call.id}, whose arguments neither parse nor repair: ${repaired.error}`)
      value = repaired.value
    }
  }
  return maskSecrets(value, secretPaths(toolset.get(tool)!.args))
}
