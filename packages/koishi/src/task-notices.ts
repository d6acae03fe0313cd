import type { BackgroundTask } from '@dogu/core'
import { type Context, Schema } from 'koishi'
import { chatTarget } from './chat-target'
import { clipText } from './clip-text'
import { configDescriptions, defineLocales } from './locales'

export interface TaskNoticesConfig {
  /** Post a notice when a background task ends. @default true */
  enabled?: boolean
  /** Longest preview of the result, in characters; 0 for none. @default 200 */
  preview?: number
}

export const TaskNoticesConfig: Schema<TaskNoticesConfig> = Schema.object({
  enabled: Schema.boolean().default(true),
  preview: Schema.natural().default(200),
}).i18n(configDescriptions((config) => config.notices))

/**
 * When a background task settles, a short notice goes to the channel its call came
 * from, in that channel's language: the task, how it ended and the start of its result.
 * Tasks of sessions without a channel (WebUI, scripts) are left alone. A notice that
 * cannot be sent is logged, never thrown.
 */
export function taskNotices(ctx: Context, config: TaskNoticesConfig = {}): void {
  if (config.enabled === false) return
  defineLocales(ctx, 'dogu.notices', (locale) => locale.notices)
  const preview = config.preview ?? 200
  const logger = ctx.logger('dogu')

  const notify = async (task: BackgroundTask) => {
    const target = await chatTarget(ctx, task.session)
    if (!target) return
    // The app stopped while the channel was looked up: there is no one left to send it.
    if (ctx.scope.uid === null) return logger.debug('task %s ended as the app stopped; no notice sent', task.id)
    if (!target.bot) {
      logger.warn('no bot of platform %s to tell %s that task %s ended', target.platform, target.channel, task.id)
      return
    }
    const content = task.result?.content.trim() ?? ''
    const clipped = clipText(content, preview)
    const status = ctx.i18n.render(target.locales, [`dogu.notices.status.${task.status}`], {})
    const key = clipped.text ? 'settled-preview' : 'settled'
    const message = ctx.i18n.render(target.locales, [`dogu.notices.${key}`], {
      id: task.id,
      tool: task.tool,
      status,
      preview: clipped.cut ? clipped.text + '…' : clipped.text,
    })
    await target.bot.sendMessage(target.channelId, message)
  }

  ctx.on('background/settled', (task: BackgroundTask) => {
    notify(task).catch((error) => logger.warn('could not tell the channel of task %s that it ended: %s', task.id, error))
  })
}
