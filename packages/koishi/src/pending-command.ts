import { mayAnswer } from '@dogu/core'
import type { Context } from 'koishi'
import { approverOf } from './approver-of'
import { durationLeftIn } from './format-duration'
import { defineLocales } from './locales'
import { commandLocale } from './person-locale'
import type { QuestionBoard } from './question-board'
import { summaryIn } from './summary-text'

/**
 * `dogu.pending`: the questions open in this channel that the sender may answer, each
 * with the number that answers it (`y 2`) and the time left. Part of the chat approvals,
 * whose questions it lists; its texts go away with them.
 */
export function pendingCommand(ctx: Context, board: QuestionBoard): void {
  defineLocales(ctx, 'commands.dogu.pending', (locale) => locale.pending)
  ctx.command('dogu.pending')
    .action(async ({ session }) => {
      const open = board.in(`${session!.platform}:${session!.channelId}`, session!.sid)
      const by = await approverOf(ctx, session!, open.map((question) => question.request.approvers))
      const theirs = open.filter((question) => mayAnswer(question.request.approvers, by))
      if (!theirs.length) return session!.text('.none')
      const now = Date.now()
      const lines = theirs.map(({ request, number }) => {
        // A question asked seconds ago has all of its 5 minutes left.
        const { unit, count } = durationLeftIn(request.expiresAt - now)
        const left = session!.i18n(`.duration.${unit}`, [count])
        if (request.kind === 'elicitation') return session!.text('.form-item', { number, tool: request.tool, message: request.input?.message ?? request.reason, left })
        // Asked before the bot restarted, and kept, or by another instance on the shared database: marked so.
        const foreign = request.restored && request.restored.instance !== ctx.permissions.engine.instanceId
        return session!.text(foreign ? '.item-foreign' : request.restored ? '.item-restored' : '.item', { number, tool: request.tool, summary: summaryIn(request, commandLocale(session!)), left, instance: request.restored?.instance ?? '' })
      })
      return [session!.text('.header', { count: theirs.length, number: theirs[0].number }), ...lines].join('\n')
    })
}
