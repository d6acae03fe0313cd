import { type BackgroundTask, describeResult } from '@dogu/core'
import { type Context, Schema } from 'koishi'
import { chatTarget, onlineBot } from './chat-target'
import { clipText } from './clip-text'
import { configDescriptions, defineLocales } from './locales'
import { catalogueLocale } from './person-locale'

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

/** How long a notice waits for its channel's bot to come online before it is given up. */
export const NOTICE_BOT_WAIT = 5 * 60_000

/**
 * When a background task settles, a short notice goes to the channel its call came
 * from, in that channel's language: the task, how it ended and the start of its result.
 * Tasks of sessions without a channel (WebUI, scripts) are left alone. A notice that
 * cannot be sent is logged, never thrown.
 *
 * The notice goes through the channel's bot once it is online: after a start, a task the
 * restart cut off, or one an answer from the console ran, may end while the adapter is still
 * connecting. A bot that is not online within `botWait` milliseconds (default
 * {@link NOTICE_BOT_WAIT}, 5 minutes) gets no notice, and the log says so.
 */
export function taskNotices(ctx: Context, config: TaskNoticesConfig = {}, botWait = NOTICE_BOT_WAIT): void {
  if (config.enabled === false) return
  defineLocales(ctx, 'dogu.notices', (locale) => locale.notices)
  const preview = config.preview ?? 200
  const logger = ctx.logger('dogu')
  const unloaded = new AbortController()
  ctx.on('dispose', () => unloaded.abort())

  const notify = async (task: BackgroundTask) => {
    const target = await chatTarget(ctx, task.session)
    if (!target) return
    // The app stopped while the channel was looked up: there is no one left to send it.
    if (ctx.scope.uid === null) return logger.debug('task %s ended as the app stopped; no notice sent', task.id)
    if (!target.bot) {
      logger.warn('no bot of platform %s to tell %s that task %s ended', target.platform, target.channel, task.id)
      return
    }
    const bot = await onlineBot(ctx, target, AbortSignal.any([unloaded.signal, AbortSignal.timeout(botWait)]))
    if (!bot) {
      if (unloaded.signal.aborted) return logger.debug('the app stopped before bot %s was online; no notice of task %s sent', target.bot.sid, task.id)
      logger.warn('bot %s was not online within %d ms: %s was not told that task %s ended', target.bot.sid, botWait, target.channel, task.id)
      return
    }
    // The outcome in the channel's language, from the result's code and parameters (the model read `content`).
    const content = task.result ? describeResult(task.result, catalogueLocale(ctx, target.locales, 'dogu.notices')).trim() : ''
    const clipped = clipText(content, preview)
    const status = ctx.i18n.render(target.locales, [`dogu.notices.status.${task.status}`], {})
    const key = clipped.text ? 'settled-preview' : 'settled'
    const message = ctx.i18n.render(target.locales, [`dogu.notices.${key}`], {
      id: task.id,
      tool: task.tool,
      status,
      preview: clipped.cut ? clipped.text + '…' : clipped.text,
    })
    await bot.sendMessage(target.channelId, message)
  }

  ctx.on('background/settled', (task: BackgroundTask) => {
    notify(task).catch((error) => logger.warn('could not tell the channel of task %s that it ended: %s', task.id, error))
  })
}
