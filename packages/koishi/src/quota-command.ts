import type { QuotaStatus } from '@dogu/core'
import type { Argv, Context } from 'koishi'
import { durationIn, durationUpIn } from './format-duration'
import { defineLocales } from './locales'
import { doguSession } from './session'

/**
 * `dogu.quota`: where each quota that applies to the sender stands (its tools, calls used
 * of its window's allowance, and when the window starts again), as `ctx.tools.registry.quotas`
 * counts them for this chat: the sender's own quotas, this channel's and this guild's.
 */
export function quotaCommand(ctx: Context, authority: number, check: (argv: Argv) => Promise<string | undefined>): void {
  defineLocales(ctx, 'commands.dogu.quota', (locale) => locale.quota)
  ctx.command('dogu.quota', { authority })
    .check(check)
    .action(async ({ session }) => {
      let statuses: QuotaStatus[]
      try {
        statuses = await ctx.tools.registry.quotas.status(doguSession(session!))
      } catch (error) {
        // The counts' database failed: the sender is told, the owner's log says why.
        ctx.logger('dogu').warn('dogu.quota could not read the quota counts: %s', error instanceof Error ? error.message : String(error))
        return session!.text('.unavailable')
      }
      if (!statuses.length) return session!.text('.none')
      const now = Date.now()
      const duration = ({ unit, count }: ReturnType<typeof durationIn>) => session!.i18n(`.duration.${unit}`, [count])
      const item = (status: QuotaStatus) => session!.text('.item', {
        name: status.name,
        tools: status.tools.length ? status.tools.join(', ') : session!.i18n('.all-tools'),
        per: session!.i18n(`.per.${status.per}`),
        window: duration(durationIn(status.windowMs)),
        used: status.used,
        max: status.max,
        remaining: status.remaining,
        // Rounded up: a reset never comes earlier than said.
        resets: duration(durationUpIn(status.resetsAt - now)),
      })
      return [session!.text('.header', { count: statuses.length }), ...statuses.map(item)].join('\n')
    })
}
