import { type Approver, askedMessage, mayAnswer, type PermissionRequest } from '@dogu/core'
import { type Context, h, type Next, Schema, type Session as KoishiSession } from 'koishi'
import { parseAnswer } from './answer-parser'
import { ChatError } from './chat-error'
import { chatTarget } from './chat-target'
import { durationIn } from './format-duration'
import { configDescriptions, defineLocales } from './locales'
import { type Question, QuestionBoard } from './question-board'

export interface ChatApprovalsConfig {
  /** Ask in chat. @default true */
  enabled?: boolean
}

export const ChatApprovalsConfig: Schema<ChatApprovalsConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
}).i18n(configDescriptions((config) => config.approvals))

/**
 * The chat asker: a call that needs approval is asked about in the channel it came from,
 * through a bot of its platform, in the channel's or the user's language. A reply of
 * `y` / `s` / `a` / `n` (or 允许 / 本会话 / 总是 / 拒绝), optionally with the question's
 * number, answers it when its author may; every other message goes on to the rest of the
 * bot. A question closes when its request ends, however it ends; unloading the plugin
 * takes the asker, its middleware and every open question down.
 */
export function chatApprovals(ctx: Context, config: ChatApprovalsConfig = {}): void {
  if (config.enabled === false) return
  defineLocales(ctx, 'dogu.approvals', (locale) => locale.approvals)
  const board = new QuestionBoard()
  ctx.effect(() => () => board.clear())

  const text = (locales: readonly string[], key: string, params: object) =>
    ctx.i18n.render([...locales], [`dogu.approvals.${key}`], params)

  // The rule or default that asked, in the chat's language; a tool's own reason as it wrote it.
  const reasonText = (locales: readonly string[], request: Readonly<PermissionRequest>) => {
    const message = askedMessage(request)
    if (!message) return request.reason
    const { effect, ...params } = message.params
    return text(locales, `reason.${message.key}`, effect ? { ...params, effect: text(locales, `effect.${effect}`, {}) } : params)
  }

  const questionText = ({ request, number, locales }: Question) => {
    const { unit, count } = durationIn(request.expiresAt - request.createdAt)
    return text(locales, 'question', {
      number,
      tool: request.tool,
      summary: request.summary,
      reason: reasonText(locales, request),
      choices: text(locales, request.confirm === 'always' ? 'choices-confirm' : 'choices', { number }),
      timeout: text(locales, `duration.${unit}`, [count]),
    })
  }

  // Lines joined with line breaks, each rendered on its own: a tool's summary is text, never markup.
  const listText = (locales: readonly string[], head: h[], questions: Question[]) => [
    ...head,
    ...questions.flatMap(({ request, number }) => [h.text('\n'), ...text(locales, 'item', { number, tool: request.tool, summary: request.summary })]),
  ]

  ctx.permissions.asker(async (request: Readonly<PermissionRequest>, { signal, respond }) => {
    const target = await chatTarget(ctx, request.session)
    // Not from a chat (a WebUI or script call): other askers show it.
    if (!target || signal.aborted) return
    const { bot } = target
    if (!bot) throw new ChatError('NO_BOT', `cannot ask in ${target.channel}: no bot of platform "${target.platform}" is there`)
    const { question, close } = board.open({ request, channel: target.channel, bot: bot.sid, locales: target.locales, respond }, signal)
    try {
      question.messageIds = await bot.sendMessage(target.channelId, questionText(question))
    } catch (error) {
      close()
      throw new ChatError('SEND_FAILED', `cannot ask in ${target.channel}: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
  })

  // Prepended, so an answer is taken before any other plugin reads it as conversation.
  ctx.middleware(async (session: KoishiSession, next: Next) => {
    if (!board.size) return next()
    const open = board.in(`${session.platform}:${session.channelId}`, session.sid)
    if (!open.length) return next()
    // A reply to someone else (`@bob y`) is not for the bot.
    const { content, hasAt, atSelf } = session.stripped
    if (hasAt && !atSelf) return next()
    const answer = parseAnswer(content ?? '')
    if (!answer) return next()
    const by = await approverOf(ctx, session)
    const theirs = open.filter((question) => mayAnswer(question.request.approvers, by))
    if (!theirs.length) return next()

    let question: Question | undefined
    if (answer.number !== undefined) {
      question = theirs.find((candidate) => candidate.number === answer.number)
      if (!question) return listText(theirs[0].locales, text(theirs[0].locales, 'unknown', { number: answer.number }), theirs)
    } else {
      const quoted = session.quote?.id
      question = (quoted && theirs.find((candidate) => candidate.messageIds.includes(quoted)))
        || (theirs.length === 1 ? theirs[0] : undefined)
      if (!question) return listText(theirs[0].locales, text(theirs[0].locales, 'which', { count: theirs.length, number: theirs[0].number }), theirs)
    }

    const { request, number, locales } = question
    const status = question.respond({ decision: answer.decision, scope: answer.scope, by })
    if (status === 'closed') return text(locales, 'closed', { number })
    // The engine turned it down after all (its own check of who may answer): not an answer.
    if (status !== 'accepted') return next()
    if (answer.decision === 'deny') return text(locales, 'denied', { number, summary: request.summary })
    const scope = request.confirm === 'always' ? 'once' : answer.scope
    return text(locales, 'allowed', { number, summary: request.summary, scope: text(locales, `scope.${scope}`, {}) })
  }, true)
}

/**
 * The replying user as the permission engine sees them: their id and platform from the
 * message, their authority as `ctx.permissions` resolves it for a caller (Koishi's user
 * table when a database is loaded, else the configured default). Never from what the
 * message says.
 */
async function approverOf(ctx: Context, session: KoishiSession): Promise<Approver> {
  const { authority } = await ctx.permissions.resolveSession(session)
  const approver: Approver = { id: session.userId!, platform: session.platform }
  if (authority !== undefined) approver.authority = authority
  return approver
}
