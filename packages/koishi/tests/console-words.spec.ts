// One term per thing across the chat and the console: the Dogu page (the console's client,
// its locales in @dogu/webui) words durations and scopes as the chat's locales do.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'
import { createI18n } from 'vue-i18n'
import { spanText, timeLeftText, type Translate } from '../../webui/client/format-duration'
import { messageTerms } from '@dogu/core'
import { durationIn, durationUpIn } from '../src/format-duration'
import { enUS } from '../src/locales/en-US'
import { zhCN } from '../src/locales/zh-CN'

const LOCALES = { 'zh-CN': zhCN, 'en-US': enUS } as const

function consoleWords(locale: keyof typeof LOCALES): Translate {
  // vue-i18n's `t`, typed over these untyped messages, is too deep for the compiler: called as the page calls it.
  const load = (name: string) => parse(readFileSync(join(__dirname, `../../webui/client/locales/${name}.yml`), 'utf8'))
  const i18n = createI18n({ legacy: false, locale, messages: { 'zh-CN': load('zh-CN'), 'en-US': load('en-US') } as any }) as unknown as { global: { t: Translate } }
  return (key, params) => i18n.global.t(key, params)
}

/** A duration as the chat words it: `durationIn` and the locale's `{0} 小时`. */
function chatDuration(locale: keyof typeof LOCALES, { unit, count }: ReturnType<typeof durationIn>): string {
  return LOCALES[locale].quota.messages.duration[unit].replace('{0}', String(count))
}

const CASES = [1000, 20_003, 59_999, 60_000, 90_000, 300_000, 840_001, 3_600_000, 5_400_000, 86_400_000, 86_400_000 * 3 + 1]

describe('the console\'s words against the chat\'s', () => {
  for (const locale of ['zh-CN', 'en-US'] as const) {
    it(`words a span and a time left as the chat does (${locale})`, () => {
      const t = consoleWords(locale)
      for (const ms of CASES) {
        expect(spanText(ms, locale)).toBe(chatDuration(locale, durationIn(ms)))
        // The chat's "resets in …" / "…后重置" is the same count, rounded up.
        expect(timeLeftText(ms, t, locale)).toBe(t('duration.in', { duration: chatDuration(locale, durationUpIn(ms)) }))
      }
    })
  }

  it('says 每 1 小时 with the chat\'s space, 每人 as its quota lines do, and 15 分钟后 as its 后重置 does', () => {
    const t = consoleWords('zh-CN')
    expect(t('quotas.scopes.user', {})).toBe(zhCN.quota.messages.per.user)
    // The grant scopes are the core's terms on the page (client/labels.ts): the chat's.
    expect(messageTerms('zh-CN').scope.always).toBe(zhCN.commands['dogu.grants'].messages.scope.always)
    expect(messageTerms('zh-CN').scope.session).toBe(zhCN.commands['dogu.grants'].messages.scope.session)
    expect(t('quotas.usedOf', { used: 1, max: 5, window: spanText(3_600_000, 'zh-CN') })).toBe('1 / 5（每 1 小时）')
    expect(timeLeftText(840_001, t, 'zh-CN')).toBe('15 分钟后')
  })
})
