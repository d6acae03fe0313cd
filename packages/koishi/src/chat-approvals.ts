import { type AnswerResult, type Approver, type ApproverPolicy, type AskAnswer, type ClosedRequest, type DecisionEvent, describeDenial, describeResult, describeRevision, formFields, type InputQuestion, jsonChanges, mayAnswer, parseFormReply, type PermissionRequest, type ResumeFailure } from '@dogu/core'
import { type Context, type Fragment, h, type Next, Schema, type Session as KoishiSession } from 'koishi'
import { type EditProblem, type ParsedAnswer, parseAnswer, parseCancel, parseDetails, parseEdit } from './answer-parser'
import { ApprovalButtons, BUTTON_PREFIX, type ButtonAction } from './approval-buttons'
import { approverOf } from './approver-of'
import { ChatError } from './chat-error'
import { chatTarget, onlineBot } from './chat-target'
import { closedRequestsOf } from './closed-requests'
import { koishiLogger } from './koishi-logger'
import { configDescriptions, defineLocales } from './locales'
import { pendingCommand } from './pending-command'
import { shownPreview } from './preview-text'
import { type Question, QuestionBoard } from './question-board'
import { editExample, formExample, questionTexts } from './question-text'
import { tapEvent } from './koishi-events'

export interface ChatApprovalsConfig {
  /** Ask in chat. @default true */
  enabled?: boolean
  /**
   * Platforms on which a question carries buttons. An adapter without buttons posts their
   * labels as text (OneBot does), so only platforms known to have them are listed.
   * @default ['discord', 'telegram']
   */
  buttons?: string[]
  /**
   * Where a question goes: `channel`, the channel the call came from, mentioning the
   * approvers to reach; `private`, a private message to each of them the bot can reach
   * (the channel is told who was asked); `both`. With nobody to reach privately, the
   * question is asked in the channel. @default 'channel'
   */
  route?: ApprovalRoute
  /**
   * Whom to reach for questions that an authority level or a Koishi permission decides
   * (a rule's `approvers.users` are reached anyway): user ids, plain (the asking bot's
   * platform) or `platform:id`. Who may answer is still decided by the question's policy.
   */
  approvers?: string[]
}

export type ApprovalRoute = 'channel' | 'private' | 'both'

export const BUTTON_PLATFORMS: readonly string[] = Object.freeze(['discord', 'telegram'])

export const ChatApprovalsConfig: Schema<ChatApprovalsConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  buttons: Schema.array(String).role('table').default([...BUTTON_PLATFORMS]),
  route: Schema.union(['channel', 'private', 'both'] as const).default('channel'),
  approvers: Schema.array(String).role('table').default([]),
}).i18n(configDescriptions((config) => config.approvals))

const ONCE: ButtonAction = { decision: 'allow', scope: 'once' }
const SESSION: ButtonAction = { decision: 'allow', scope: 'session' }
const ALWAYS: ButtonAction = { decision: 'allow', scope: 'always' }
const DENY: ButtonAction = { decision: 'deny', scope: 'once' }
const DETAILS: ButtonAction = { decision: 'details' }
const CANCEL: ButtonAction = { decision: 'cancel' }

/** A tool's form (`call.elicit`), not an approval: filled, declined (`n`) or dismissed (`取消`). */
const isForm = (question: Question) => question.request.kind === 'elicitation' && !!question.request.input

/**
 * The id decisions name a request by: the one it was first asked under. A request asked again
 * after a restart (`restored`) has a new id; its decisions carry the first one.
 */
const keyOf = (request: Readonly<PermissionRequest>) => request.restored?.originalId ?? request.id

/** The causes of a closure the locales word (`closed-cause.*`); any other says the engine's reason. */
const CLOSED_CAUSES: ReadonlySet<string> = new Set(['expired', 'evicted', 'in-run', 'masked', 'corrupt', 'undefined-tool'])

/** How a person answered a form: its values, a no, or dismissed unanswered. */
type FormAnswer = { decision: 'allow'; value: unknown } | { decision: 'deny'; dismissed?: true }

/**
 * The chat asker: a call that needs approval is asked about in the channel it came from,
 * through a bot of its platform, in the channel's or the user's language, with what the
 * call would do (its preview, bounded). A reply of `y` / `s` / `a` / `n` (or 允许 / 本会话 /
 * 总是 / 拒绝), optionally with the question's number, answers it when its author may;
 * `d` / `详情` posts the whole preview; every other message goes on to the rest of the
 * bot. On platforms with buttons the question carries them too (`approval-buttons.ts`).
 * A question closes when its request ends, however it ends, and says so in the channel
 * when it timed out; unloading the plugin takes the asker, its middleware, its buttons
 * and every open question down.
 *
 * A tool's form (`call.elicit`, a request of kind `elicitation`) is asked the same way but
 * worded as what it is: the tool's message and the fields, answered with `key=value` pairs
 * or a JSON object (`username=bob`, `{"username": "bob"}`, numbered `2 username=bob`), `n`
 * / 拒绝 to decline, `c` / 取消 to dismiss it unanswered, `y` to send its defaults; a value
 * the form refuses is explained and the form keeps waiting.
 *
 * With `permissions.durable`, a question still open when the bot stopped is posted again
 * after the restart (once its bot is online), saying so, with new buttons: a press of an old
 * one is refused, pointing to the new question. An answer to it runs the call as a
 * background task (its result comes as a task notice); the reply says when another answer
 * or instance came first, or when this instance cannot run it. A kept request closed at the
 * restart (expired meanwhile, …) is told to its channel with why.
 */
export function chatApprovals(ctx: Context, config: ChatApprovalsConfig = {}): void {
  if (config.enabled === false) return
  defineLocales(ctx, 'dogu.approvals', (locale) => locale.approvals)
  const buttonPlatforms = new Set(config.buttons ?? BUTTON_PLATFORMS)
  const texts = questionTexts(ctx)
  const { text, summary, localeIn } = texts
  const buttons = new ApprovalButtons()
  const route = config.route ?? 'channel'
  // Every copy of each question posted (its channel, and private messages), by request id,
  // until just after they close: an expiry or an answer is reported (`permissions/decision`)
  // right after the request's signal closed them.
  const posted = new Map<string, Question[]>()
  /** The copy an answer came through: it got its reply there, the other copies are told. */
  const answeredIn = new Map<string, Question>()
  /** Questions another instance asked and posted (a shared database): answerable here, never posted from here. */
  const silent = new Set<Question>()
  const board = new QuestionBoard((question) => {
    buttons.revoke(question)
    silent.delete(question)
    queueMicrotask(() => {
      posted.delete(keyOf(question.request))
      answeredIn.delete(keyOf(question.request))
    })
  })
  // Ends the listeners on forms' signals when the plugin goes: nothing is posted after.
  const unloaded = new AbortController()
  ctx.effect(() => () => {
    unloaded.abort()
    board.clear()
    silent.clear()
    buttons.clear()
    posted.clear()
    answeredIn.clear()
  })
  pendingCommand(ctx, board)

  ctx.permissions.asker(async (request: Readonly<PermissionRequest>, { signal, respond, answer, kept, elsewhere }) => {
    const target = await chatTarget(ctx, request.session)
    // Not from a chat (a WebUI or script call): other askers show it.
    if (!target || signal.aborted) return
    // Asked again after a restart: the adapter may still be connecting.
    const bot = request.restored ? await onlineBot(ctx, target, AbortSignal.any([signal, unloaded.signal])) : target.bot
    if (signal.aborted || unloaded.signal.aborted) return
    if (!bot) throw new ChatError('NO_BOT', `cannot ask in ${target.channel}: no bot of platform "${target.platform}" is there`)
    const key = keyOf(request)
    // Asked by another instance on the shared database, which posted it (and may still wait
    // for it): not posted again from here, but a reply in the channel answers it here too.
    if (request.restored && request.restored.instance !== ctx.permissions.engine.instanceId) {
      const { question } = board.open({ request, channel: target.channel, channelId: target.channelId, bot: bot.sid, locales: target.locales, respond, ...(answer ? { answer } : {}) }, signal)
      if (signal.aborted) return
      silent.add(question)
      posted.set(key, [question])
      return
    }
    const form = request.kind === 'elicitation' && !!request.input
    const actions = form ? [DENY, CANCEL] : request.confirm === 'always' ? [ONCE, DENY] : [ONCE, SESSION, ALWAYS, DENY]
    // 详情 only when the question leaves part of the preview out.
    if (shownPreview(request.preview).cut) actions.push(DETAILS)
    const reach = approversToReach(request, config.approvers ?? [], target.platform)
    const direct = route === 'channel' ? [] : reach
    const copies: Question[] = []
    // A form's end is no decision the engine reports: its signal tells every copy not answered there.
    if (form) signal.addEventListener('abort', () => formEnded(request, copies), { once: true, signal: unloaded.signal })
    // Nor is a restored request's answer on another instance (that instance reports it): its copies are closed here.
    if (request.restored && elsewhere) signal.addEventListener('abort', () => answeredElsewhere(request, copies, elsewhere()), { once: true, signal: unloaded.signal })
    /** Posts one copy of the question; the error when it could not be sent. */
    const ask = async (channel: string, channelId: string, extra: h[] = []) => {
      const { question, close } = board.open({ request, channel, channelId, bot: bot.sid, locales: target.locales, respond, ...(answer ? { answer } : {}) }, signal)
      // Known while a copy is open: the board's close takes it out again.
      if (!signal.aborted) posted.set(key, copies)
      const issued = buttonPlatforms.has(target.platform) ? buttons.issue(question, actions) : []
      try {
        question.messageIds = await bot.sendMessage(channelId, [...texts.question(question, issued), ...extra])
      } catch (error) {
        close()
        return error
      }
      copies.push(question)
      // Its record could not be written after all: the question will not survive a restart.
      if (request.durable !== false) {
        void kept?.then((written) => {
          if (written || signal.aborted) return
          bot.sendMessage(channelId, text(question.locales, 'not-kept', { number: question.number })).catch((error: unknown) => {
            koishiLogger(ctx).warn('cannot tell %s that request %s was not kept: %s', channel, request.id, error)
          })
        })
      }
    }
    // Privately first, so the channel can say who was asked; a DM that fails is logged, and
    // with none delivered the question goes to the channel after all.
    const reached: string[] = []
    for (const userId of direct) {
      let channelId: string
      try {
        channelId = (await bot.createDirectChannel(userId)).id
      } catch (error) {
        koishiLogger(ctx).warn('cannot reach approver %s:%s privately for request %s: %s', target.platform, userId, request.id, error)
        continue
      }
      if (signal.aborted) break
      const error = await ask(`${target.platform}:${channelId}`, channelId)
      if (error) koishiLogger(ctx).warn('cannot ask approver %s:%s privately for request %s: %s', target.platform, userId, request.id, error)
      else reached.push(userId)
    }
    if (signal.aborted) return
    if (route === 'private' && reached.length) {
      // The caller learns who was asked; the question itself is not in the channel.
      await bot.sendMessage(target.channelId, text(target.locales, form ? 'form-asked-private' : 'asked-private', { summary: summary(target.locales, request), tool: request.tool, users: mentions(reached) }))
        .catch((error: unknown) => koishiLogger(ctx).warn('cannot tell %s who was asked about request %s: %s', target.channel, request.id, error))
      return
    }
    // In the channel, mentioning whoever should answer; the caller reads who that is.
    const asking = reach.length ? [h.text('\n'), ...text(target.locales, form ? 'form-asked-approvers' : 'asked-approvers', { users: mentions(reach) })] : []
    const error = await ask(target.channel, target.channelId, asking)
    if (error) {
      if (copies.length) return
      throw new ChatError('SEND_FAILED', `cannot ask in ${target.channel}: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
  })

  /** The decision each answer given here led to, by request (`keyOf`): the engine reports it while the answer is carried out. */
  const answering = new Map<string, { event?: DecisionEvent }>()

  /** Hands an answer to the engine; the reply to post, or `undefined` when the engine turned it down. */
  const settle = async (question: Question, answer: Omit<ParsedAnswer, 'number'>, by: Approver, via: 'text' | 'button', value?: unknown): Promise<Fragment | undefined> => {
    const { request, number, locales } = question
    const key = keyOf(request)
    answeredIn.set(key, question)
    const watch: { event?: DecisionEvent } = {}
    answering.set(key, watch)
    const given: AskAnswer = value === undefined ? { decision: answer.decision, scope: answer.scope, by, via } : { decision: 'allow', scope: answer.scope, by, via, value }
    let result: AnswerResult
    try {
      // What came of it: a restored request's answer is claimed and its call started first.
      result = question.answer ? await question.answer(given) : { status: question.respond(given), open: false }
    } finally {
      if (answering.get(key) === watch) answering.delete(key)
    }
    const { status } = result
    if (status !== 'accepted' && answeredIn.get(key) === question) answeredIn.delete(key)
    const params = { number, summary: summary(locales, request) }
    if (status === 'closed') return text(locales, 'closed', { number })
    // Another answer (here or on another instance) claimed it first.
    if (status === 'taken') return text(locales, result.by ? 'taken' : 'taken-unknown', { ...params, by: result.by ?? '' })
    // Still open: this instance cannot run the tool; closed: the rules deny the call now.
    if (status === 'refused') {
      if (result.open) return text(locales, 'refused-no-tool', { number, tool: request.tool })
      return text(locales, 'refused-denied', { ...params, reason: result.denial ? describeDenial(result.denial, localeIn(locales)) : result.reason ?? '' })
    }
    // The tools host's own words, after the chat's: it was approved, and could not start.
    if (status === 'failed') return text(locales, 'resume-failed', { ...params, reason: result.failure ? failureIn(locales, result.failure) : result.error ?? result.reason ?? '' })
    // An edit the engine refused: the person hears why (`check` passed, so it is who may approve the edited call).
    if (value !== undefined && status !== 'accepted') {
      const reason = result.refusal ? describeRevision(result.refusal, localeIn(locales)) : result.reason ?? (request.input && editRefusal(request.input, value, locales))
      return text(locales, status === 'not-allowed' ? 'edit-not-allowed' : 'edit-invalid', { number, reason: reason ?? '' })
    }
    // A restored request's rules changed meanwhile, and now name other approvers.
    if (status === 'not-allowed' && request.restored && result.approvers) return text(locales, 'not-allowed-now', { number, approvers: approversIn(locales, result.approvers) })
    if (status === 'not-allowed' && request.restored && result.reason) return text(locales, 'not-allowed-unknown', { number, reason: result.reason })
    // The engine turned it down after all (its own check of who may answer): not an answer.
    if (status !== 'accepted') return undefined
    // A restored request's call runs as a background task; its notice brings the result.
    const task = result.taskId ? [h.text('\n'), ...text(locales, 'resumed', { taskId: result.taskId })] : []
    const decided = watch.event
    if (decided?.source.kind === 'answer' && decided.source.edited) {
      const changes = editedChanges(request.args, decided.request.args)
      if (decided.decision === 'deny') {
        // Why the edited call is denied (the reply says it was edited): the rule's, in the reply's language.
        const denial = decided.denial?.cause === 'edit_denied' ? decided.denial.denial : decided.denial
        return text(locales, 'edit-denied', { number, summary: summary(locales, request), reason: denial ? describeDenial(denial, localeIn(locales)) : decided.reason ?? '' })
      }
      // The call as it runs (the schema's defaults filled in, secrets masked), not only what was typed.
      return [...text(locales, 'edit-allowed', { number, summary: summary(locales, request), scope: text(locales, `scope.${decided.source.scope}`), changes, args: shownArgs(decided.request.args) }), ...task]
    }
    if (answer.decision === 'deny') return text(locales, 'denied', params)
    // A restored request's scope is the engine's (a rule with named approvers grants once only).
    const answered = request.restored && decided?.source.kind === 'answer' ? decided.source.scope : answer.scope
    const scope = request.confirm === 'always' ? 'once' : answered
    return [...text(locales, 'allowed', { ...params, scope: text(locales, `scope.${scope ?? 'once'}`) }), ...task]
  }

  /** Why a call approved after a restart could not start, in the reply's language (the pipeline's refusal by describeResult). */
  const failureIn = (locales: readonly string[], failure: ResumeFailure): h[] => {
    if (failure.kind === 'invalid') return text(locales, 'resume-failure.invalid', { reason: describeResult(failure.result, localeIn(locales)) })
    return text(locales, `resume-failure.${failure.kind}`, failure)
  }

  /** Who may answer a request now, in the reply's language: `用户 mock:bob 或权限等级不低于 4 的用户`. */
  const approversIn = (locales: readonly string[], policy: Readonly<ApproverPolicy>): h[] => {
    const who: h[][] = []
    if (policy.userId !== undefined) who.push(text(locales, 'approvers.caller', { user: `${policy.platform ? `${policy.platform}:` : ''}${policy.userId}` }))
    if (policy.users?.length) who.push(text(locales, 'approvers.users', { users: policy.users.join(', ') }))
    if (policy.permissions?.length) who.push(text(locales, 'approvers.permissions', { permissions: policy.permissions.join(', ') }))
    if (policy.authority !== undefined) who.push(text(locales, 'approvers.authority', { authority: policy.authority }))
    if (!who.length) return text(locales, 'approvers.nobody')
    return who.flatMap((part, index) => index ? [...text(locales, 'approvers.or'), ...part] : part)
  }

  /** Why a tool's form refuses `value`, in the reply's language (its problems by path); `undefined` when it takes it. */
  const formRefusal = (input: Readonly<InputQuestion>, value: unknown, locales: readonly string[]): string | undefined => {
    const resolved = input.resolve?.(value)
    if (resolved && 'error' in resolved && resolved.refusal) return describeRevision(resolved.refusal, localeIn(locales))
    return input.check(value)
  }

  /** Hands an answer to a form to the engine; the reply to post, or `undefined` when the engine turned it down. */
  const settleForm = (question: Question, answer: FormAnswer, by: Approver, via: 'text' | 'button'): Fragment | undefined => {
    const { request, number, locales } = question
    const params = { number, tool: request.tool }
    if (answer.decision === 'allow') {
      // Checked first, so a refusal says why; the form keeps waiting.
      const problem = formRefusal(request.input!, answer.value, locales)
      if (problem) return text(locales, 'form-invalid', { ...params, reason: problem })
    }
    answeredIn.set(keyOf(request), question)
    const status = question.respond(answer.decision === 'allow'
      ? { decision: 'allow', by, via, value: answer.value }
      : { decision: 'deny', by, via, ...(answer.dismissed ? { dismissed: true } : {}) })
    if (status !== 'accepted' && answeredIn.get(keyOf(request)) === question) answeredIn.delete(keyOf(request))
    if (status === 'closed') return text(locales, 'closed', { number })
    if (answer.decision === 'allow' && status !== 'accepted') {
      return text(locales, status === 'not-allowed' ? 'form-not-allowed' : 'form-invalid', { ...params, reason: formRefusal(request.input!, answer.value, locales) ?? '' })
    }
    if (status !== 'accepted') return undefined
    if (answer.decision === 'allow') return text(locales, 'form-accepted', params)
    return text(locales, answer.dismissed ? 'form-cancelled' : 'form-declined', params)
  }

  /** Closes the copies of a form that ended elsewhere or unanswered: timed out, or answered or cancelled elsewhere. */
  const formEnded = (request: Readonly<PermissionRequest>, copies: readonly Question[]) => {
    const from = answeredIn.get(keyOf(request))
    // The engine's timer ends the request at `expiresAt`; anything before is an answer elsewhere or the call's end.
    const expired = Date.now() >= request.expiresAt
    for (const question of copies) {
      if (question === from) continue
      const bot = ctx.bots.find((candidate) => candidate.sid === question.bot)
      if (!bot) continue
      const { number, locales } = question
      bot.sendMessage(question.channelId, text(locales, expired ? 'form-expired' : 'form-ended', { number, tool: request.tool })).catch((error: unknown) => {
        koishiLogger(ctx).warn('cannot close request %s in %s: %s', request.id, question.channel, error)
      })
    }
  }

  /**
   * Closes the copies of a question posted again after a restart that an answer on another
   * instance ended, saying who answered, as a live question's copies are closed (the decision
   * tap below); the copy an answer here came through got its reply.
   */
  const answeredElsewhere = (request: Readonly<PermissionRequest>, copies: readonly Question[], taken: { by: string } | undefined) => {
    if (!taken) return
    const from = answeredIn.get(keyOf(request))
    for (const question of copies) {
      if (question === from) continue
      const bot = ctx.bots.find((candidate) => candidate.sid === question.bot)
      if (!bot) continue
      const { number, locales } = question
      bot.sendMessage(question.channelId, text(locales, 'taken', { number, summary: summary(locales, request), by: taken.by })).catch((error: unknown) => {
        koishiLogger(ctx).warn('cannot close request %s in %s: %s', request.id, question.channel, error)
      })
    }
  }

  /** A form's values from a reply: the fields typed, over the values it started from (its defaults). */
  const formValue = (question: Question, values: Record<string, unknown>) => {
    const initial = question.request.input!.initial
    return { ...(initial && typeof initial === 'object' ? initial : {}), ...values }
  }

  /**
   * A question's edit form. A question restored before its tool's plugin loaded gets it later,
   * on the engine's request of the same id: an edit is taken once the tool is there.
   */
  const editFormOf = (request: Readonly<PermissionRequest>) =>
    request.input ?? (request.restored ? ctx.permissions.pending().find((pending) => pending.id === request.id)?.input : undefined)

  /** Why an edit's arguments are refused, in the reply's language (`describeRevision`); `undefined` when they would be taken. */
  const editRefusal = (input: Readonly<InputQuestion>, value: unknown, locales: readonly string[]): string | undefined => {
    const resolved = input.resolve?.(value)
    if (!resolved) return input.check(value)
    if (!('error' in resolved)) return undefined
    return resolved.refusal ? describeRevision(resolved.refusal, localeIn(locales)) : resolved.error
  }

  /**
   * Why an edit reply cannot be taken, with an example from the approval it is for: the one it
   * names, else the first that takes an edit (one that takes none says so).
   */
  const editProblem = (problem: EditProblem, questions: readonly Question[]): h[] => {
    const question = questions.find((candidate) => candidate.number === problem.number)
      ?? questions.find((candidate) => candidate.request.input)
      ?? questions[0]
    const { request, locales } = question
    const input = editFormOf(request)
    if (!input) return text(locales, 'edit-unavailable', { number: question.number })
    const example = input.initial && typeof input.initial === 'object' ? editExample(input.initial as Record<string, unknown>) : '{}'
    switch (problem.problem) {
      case 'too-long': return text(locales, 'edit-problem.too-long', { max: problem.max })
      case 'shape': return text(locales, 'edit-problem.shape', { example })
      case 'scope': return text(locales, 'edit-problem.scope', { word: problem.word })
      case 'object': return text(locales, 'edit-problem.object', { example, got: text(locales, `value-kind.${problem.got}`) })
      case 'json': {
        const { at } = problem
        const where = text(locales, `json-place.${at ? (at.end ? 'end' : 'at') : 'unknown'}`, at ?? {})
        return text(locales, 'edit-problem.json', { example, where })
      }
    }
  }

  // Prepended, so an answer is taken before any other plugin reads it as conversation.
  ctx.middleware(async (session: KoishiSession, next: Next) => {
    if (!board.size) return next()
    const open = board.in(`${session.platform}:${session.channelId}`, session.sid)
    if (!open.length) return next()
    // A reply to someone else (`@bob y`) is not for the bot.
    const { content, hasAt, atSelf } = session.stripped
    if (hasAt && !atSelf) return next()
    const edit = parseEdit(content ?? '')
    const answer = edit ? undefined : parseAnswer(content ?? '')
    const details = answer || edit ? undefined : parseDetails(content ?? '')
    // Only a form is dismissed or filled with bare values: with none open, these are conversation.
    const anyForm = open.some(isForm)
    const cancel = anyForm && !answer && !details && !edit ? parseCancel(content ?? '') : undefined
    const fill = anyForm && !answer && !details && !edit && !cancel ? parseFormReply(content ?? '', []) : undefined
    if (!answer && !details && !edit && !cancel && !fill) return next()
    const by = await approverOf(ctx, session, open.map((question) => question.request.approvers))
    const theirs = open.filter((question) => mayAnswer(question.request.approvers, by))
    // Dismissing and filling name forms only: an approval among them is not a candidate.
    const candidates = cancel || fill ? theirs.filter(isForm) : theirs
    if (!candidates.length) return next()
    // An edit of an approval that cannot be taken says why; a form reads the reply as its own.
    const editable = theirs.filter((question) => !isForm(question))
    if (edit && 'problem' in edit && editable.length) return editProblem(edit, editable)

    const number = edit ? edit.number : answer ? answer.number : details ? details.number : cancel ? cancel.number : fill && 'values' in fill ? fill.number : undefined
    const forms = candidates === theirs ? undefined : candidates
    const locales = candidates[0].locales
    let question: Question | undefined
    if (number !== undefined) {
      question = candidates.find((candidate) => candidate.number === number)
      if (!question) return texts.list(locales, text(locales, forms ? 'form-unknown' : 'unknown', { number }), candidates)
    } else {
      const quoted = session.quote?.id
      question = (quoted && candidates.find((candidate) => candidate.messageIds.includes(quoted)))
        || (candidates.length === 1 ? candidates[0] : undefined)
      if (!question) return texts.list(locales, text(locales, forms ? 'form-which' : 'which', { count: candidates.length, number: candidates[0].number }), candidates)
    }
    if (isForm(question)) {
      const params = { number: question.number, tool: question.request.tool }
      if (cancel) return settleForm(question, { decision: 'deny', dismissed: true }, by, 'text') ?? next()
      if (answer?.decision === 'deny') return settleForm(question, { decision: 'deny' }, by, 'text') ?? next()
      // `y`: the form as it started, its defaults (the check says what is missing).
      if (answer) return settleForm(question, { decision: 'allow', value: formValue(question, {}) }, by, 'text') ?? next()
      if (details) return texts.details(question)
      // Read again with this form's fields, so each value is read as its field's type.
      const fields = formFields(question.request.input!)
      const reply = edit && !('problem' in edit) ? { values: edit.changes } : parseFormReply(content ?? '', fields)
      if (!reply) return next()
      if ('problem' in reply) {
        const example = formExample(fields, question.request.input!.initial).json
        return text(question.locales, `form-problem.${reply.problem}`, { ...params, detail: reply.detail ?? '', keys: fields.map((field) => field.key).join(', '), example })
      }
      return settleForm(question, { decision: 'allow', value: formValue(question, reply.values) }, by, 'text') ?? next()
    }
    if (edit && !('problem' in edit)) {
      const { request, locales } = question
      const input = editFormOf(request)
      if (!input) return text(locales, 'edit-unavailable', { number: question.number })
      // The changes go over the arguments as asked (secrets stay masked, and so keep their value).
      const value = { ...input.initial as object, ...edit.changes }
      const problem = editRefusal(input, value, locales)
      if (problem !== undefined) return text(locales, 'edit-invalid', { number: question.number, reason: problem })
      return (await settle(question, { decision: 'allow', scope: edit.scope }, by, 'text', value)) ?? next()
    }
    // The whole preview; the question stays open.
    if (!answer) return texts.details(question)
    return (await settle(question, answer, by, 'text')) ?? next()
  }, true)

  // A press of one of the questions' buttons: only a live id of a question open in the
  // channel it was pressed in, by someone who may answer that question.
  ctx.on('interaction/button', async (session: KoishiSession) => {
    const id = session.event.button?.id
    if (typeof id !== 'string' || !id.startsWith(BUTTON_PREFIX)) return
    const reply = async (content: Fragment) => {
      try {
        await session.send(content)
      } catch (error) {
        koishiLogger(ctx).warn('cannot reply to a button press in %s:%s: %s', session.platform, session.channelId, error)
      }
    }
    const live = (button = buttons.find(id)) => button && button.question.bot === session.sid
      && button.question.channel === `${session.platform}:${session.channelId}` ? button : undefined
    const button = live()
    if (!button) {
      // From before a restart: the question it belonged to was posted again, with new buttons.
      const restored = buttons.issuedHere(id) ? [] : board.in(`${session.platform}:${session.channelId}`, session.sid).filter((question) => question.request.restored)
      if (restored.length === 1) return reply(text(restored[0].locales, 'button-old', { number: restored[0].number }))
      if (restored.length) return reply(texts.list(restored[0].locales, text(restored[0].locales, 'button-old-many', { number: restored[0].number }), restored))
      return reply(text([], 'button-used'))
    }
    const { question } = button
    const by = await approverOf(ctx, session, [question.request.approvers])
    if (!mayAnswer(question.request.approvers, by)) return reply(text(question.locales, 'button-not-yours', { number: question.number }))
    // Pressed twice at once, or the question closed meanwhile: the first press counts.
    if (live() !== button) return reply(text(question.locales, 'button-used'))
    buttons.take(id)
    if (button.action.decision === 'details') return reply(texts.details(question))
    // A form carries two buttons: decline (`deny`) and dismiss (`cancel`); its values are typed.
    if (button.action.decision === 'cancel' || isForm(question)) {
      const answered = settleForm(question, button.action.decision === 'cancel' ? { decision: 'deny', dismissed: true } : { decision: 'deny' }, by, 'button')
      if (answered) return reply(answered)
      return
    }
    const answered = await settle(question, button.action, by, 'button')
    if (answered) return reply(answered)
  })

  /** Tells a kept request's channel that it was closed at the restart, once its bot is online; never throws. */
  const tellClosed = async (closed: ClosedRequest) => {
    const session = closed.record?.session ?? closed.session
    const target = session && await chatTarget(ctx, session)
    if (!target || unloaded.signal.aborted) return
    const bot = await onlineBot(ctx, target, unloaded.signal)
    if (unloaded.signal.aborted) return
    if (!bot) return koishiLogger(ctx).warn('no bot of platform %s to tell %s that request %s was closed: %s', target.platform, target.channel, closed.id ?? closed.record?.id, closed.reason)
    const { locales } = target
    const reason = CLOSED_CAUSES.has(closed.cause) ? text(locales, `closed-cause.${closed.cause}`, { reason: closed.reason, detail: closed.detail ?? closed.reason, tool: closed.record?.tool ?? '' }) : closed.reason
    const message = closed.record
      ? text(locales, 'closed-restart', { summary: summary(locales, closed.record), reason })
      : text(locales, 'closed-restart-unknown', { reason })
    await bot.sendMessage(target.channelId, message)
  }
  // Closures since the engine read its store, those before this plugin loaded too.
  const closures = closedRequestsOf(ctx.permissions.engine)
  if (closures) {
    ctx.effect(() => closures.listen((closed) => {
      tellClosed(closed).catch((error: unknown) => koishiLogger(ctx).warn('cannot tell the channel of request %s that it was closed: %s', closed.id ?? closed.record?.id, error))
    }))
  }

  // A question that timed out says so wherever it was asked; one answered through one copy
  // (or elsewhere: the console) closes every other copy with who answered. Tapped, as the
  // audit log is (koishi-events.ts): a listener would send every call's decision through
  // cordis 3's dispatch, and only approvals' decisions matter here.
  ctx.effect(() => tapEvent(ctx, 'permissions/decision', (event: DecisionEvent) => {
    if (event.phase !== 'approve' || !event.requestId) return
    const { source } = event
    if (source.kind !== 'timeout' && source.kind !== 'answer' && source.kind !== 'elsewhere') return
    const watch = answering.get(event.requestId)
    if (watch) watch.event = event
    const copies = posted.get(event.requestId)
    if (!copies) return
    posted.delete(event.requestId)
    const from = answeredIn.get(event.requestId)
    answeredIn.delete(event.requestId)
    for (const question of copies) {
      // Not posted from here: the instance that posted it closes it.
      if (question === from || silent.has(question)) continue
      const bot = ctx.bots.find((candidate) => candidate.sid === question.bot)
      if (!bot) continue
      // A form's copies are closed by its signal (formEnded).
      if (isForm(question)) continue
      const { request, number, locales } = question
      const notice = source.kind === 'timeout'
        ? text(locales, 'expired', { number, summary: summary(locales, request) })
        // Answered on another instance: the call runs there.
        : source.kind === 'elsewhere'
          ? text(locales, source.by ? 'taken' : 'taken-unknown', { number, summary: summary(locales, request), by: source.by ?? '' })
          : text(locales, 'answered-by', { number, summary: summary(locales, request), by: answererName(source.by), decision: text(locales, event.decision === 'allow' ? `scope.${source.scope ?? 'once'}` : 'decision-deny') })
      bot.sendMessage(question.channelId, notice).catch((error: unknown) => {
        koishiLogger(ctx).warn('cannot close request %s in %s: %s', request.id, question.channel, error)
      })
    }
  }))
}

/**
 * The users to reach about a request, on the asking bot's platform: the rule's named
 * approvers, then the configured ones, without the caller (who is asked in the channel
 * anyway) and without ids of other platforms.
 */
function approversToReach(request: Readonly<PermissionRequest>, configured: readonly string[], platform: string): string[] {
  const ids = new Set<string>()
  for (const entry of [...request.approvers.users ?? [], ...configured]) {
    const at = entry.indexOf(':')
    if (at >= 0 && entry.slice(0, at) !== platform) continue
    const id = at >= 0 ? entry.slice(at + 1) : entry
    if (id && id !== request.session.userId) ids.add(id)
  }
  return [...ids]
}

/** What an approver's edit changed, one line per path, for the reply in chat. */
function editedChanges(before: unknown, after: unknown): string {
  const lines = jsonChanges(before, after)
  return lines.length ? lines.join('\n') : '—'
}

/** Longest arguments text the reply to an edit shows: the rest is in the console and the audit log. */
const SHOWN_ARGS_LENGTH = 1500

/** An edited call's arguments (secrets already `••••`) as the reply to the edit shows them: JSON, long ones cut. */
function shownArgs(args: unknown): string {
  const json = JSON.stringify(args) ?? '{}'
  return json.length > SHOWN_ARGS_LENGTH ? `${json.slice(0, SHOWN_ARGS_LENGTH - 1)}…` : json
}

/** `discord:42` as the chat shows who answered: the id, with its platform when it has one. */
function answererName(by: unknown): string {
  if (typeof by === 'string') return by
  const { id, platform } = (by ?? {}) as { id?: string; platform?: string }
  return platform ? `${platform}:${id}` : String(id)
}

/** `@ops @admin`: each user mentioned, a space between. */
function mentions(userIds: readonly string[]): h[] {
  return userIds.flatMap((id, index) => index ? [h.text(' '), h.at(id)] : [h.at(id)])
}
