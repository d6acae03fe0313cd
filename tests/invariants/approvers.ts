import type { Asker, DecisionEvent, PermissionRequest } from '@dogu/core'
import type { ChatChannel } from './chat-channel'
import { type ApproverAction, type Observations, serialize } from './channels'
import { editFor } from './edits'
import type { Answer } from './scenario'

// The two ways a scripted person answers a question: as an asker of the engine (the answer
// handed to `respond`), or in the Koishi chat, reading the bot's question in the channel and
// replying there as a user of the mock platform (`y 1`, `s 1`, `n 1`, `e 1 {json}`), so the
// chat's own parser, its checks and its replies are what the run goes through. Both do what
// `Answer` says, and both call `beforeAnswer` first, between the question and the answer.

/** What happens between the question and the answer: a third party's change to the file, a look at the console. */
export type BeforeAnswer = (request: Readonly<PermissionRequest>) => Promise<void>

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
    await beforeAnswer(request)
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
    await beforeAnswer(request)
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
