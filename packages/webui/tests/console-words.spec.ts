// The console's own words (client/locales), outside a browser: both locales name the same
// messages, durations read as the chat's, and dates follow the page's locale, not the machine's.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { describe, expect, it } from 'vitest'
import { createI18n } from 'vue-i18n'
import { messageTerms } from '@dogu/core'
import { dateTimeText, timeText } from '../client/format-date'
import { elapsedText, spanText, timeLeftText, type Translate } from '../client/format-duration'

const messages = (locale: string) => parse(readFileSync(join(__dirname, `../client/locales/${locale}.yml`), 'utf8')) as Record<string, unknown>

/** The console's `t` in `locale`, as the page builds it (client/install.ts). */
function translate(locale: 'zh-CN' | 'en-US'): Translate {
  // vue-i18n's `t`, typed over these untyped messages, is too deep for the compiler: called as the page calls it.
  const i18n = createI18n({ legacy: false, locale, fallbackLocale: 'en-US', messages: { 'zh-CN': messages('zh-CN'), 'en-US': messages('en-US') } as any }) as unknown as { global: { t: Translate } }
  return (key, params) => i18n.global.t(key, params)
}

/** Every message key, `a.b.c`. */
function keys(tree: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([key, value]) => value && typeof value === 'object' ? keys(value as Record<string, unknown>, `${prefix}${key}.`) : [`${prefix}${key}`])
}

describe('the console\'s messages', () => {
  it('name the same keys in zh-CN and en-US', () => {
    expect(keys(messages('zh-CN')).sort()).toEqual(keys(messages('en-US')).sort())
  })

  it('leave the words for statuses, codes, modes, effects and scopes to the core\'s terms, shared with the chat', () => {
    // One term per thing: the page reads them from messageTerms (client/labels.ts), never from its own copy.
    for (const locale of ['zh-CN', 'en-US']) {
      const tree = messages(locale) as Record<string, any>
      expect(tree.codes).toBeUndefined()
      expect(tree.effects).toBeUndefined()
      expect(tree.modes.names).toBeUndefined()
      expect(tree.grants.scopes).toBeUndefined()
      expect(tree.audit.scopes).toBeUndefined()
      // Only the statuses the core has no term for: a task's, a shell's.
      expect(Object.keys(tree.statuses).filter((status) => Object.hasOwn(messageTerms(locale).status, status))).toEqual([])
      for (const mode of ['default', 'readOnly', 'acceptEdits', 'trust']) expect(tree.modes.hints[mode]).toEqual(expect.any(String))
    }
  })
})

describe('durations', () => {
  const zh = translate('zh-CN')
  const en = translate('en-US')

  it('read a call\'s run and wait times in milliseconds, seconds to one decimal, then whole units', () => {
    expect(elapsedText(4.6, zh, 'zh-CN')).toBe('5 毫秒')
    expect(elapsedText(1234, zh, 'zh-CN')).toBe('1.2 秒')
    expect(elapsedText(20_003, zh, 'zh-CN')).toBe('20 秒')
    expect(elapsedText(125_000, zh, 'zh-CN')).toBe('2 分钟')
    expect(elapsedText(20_003, en, 'en-US')).toBe('20 s')
    expect(elapsedText(1234, en, 'en-US')).toBe('1.2 s')
    expect(elapsedText(999.4, en, 'en-US')).toBe('999 ms')
    expect(elapsedText(999.6, en, 'en-US')).toBe('1 s')
  })

  it('read a span in its largest whole unit and a time left rounded up, never early', () => {
    expect(spanText(3_600_000, 'zh-CN')).toBe('1 小时')
    expect(spanText(90_000, 'zh-CN')).toBe('1 分钟')
    expect(spanText(86_400_000 * 2, 'en-US')).toBe('2 d')
    expect(timeLeftText(840_001, zh, 'zh-CN')).toBe('15 分钟后')
    expect(timeLeftText(5_400_000, zh, 'zh-CN')).toBe('2 小时后')
    expect(timeLeftText(0, zh, 'zh-CN')).toBe('1 秒后')
    expect(timeLeftText(572_000, en, 'en-US')).toBe('in 10 min')
  })

  it('fill a quota\'s window with a space, as the chat does: 每 1 小时', () => {
    expect(zh('quotas.usedOf', { used: 2, max: 3, window: spanText(3_600_000, 'zh-CN') })).toBe('2 / 3（每 1 小时）')
    expect(en('quotas.usedOf', { used: 2, max: 3, window: spanText(3_600_000, 'en-US') })).toBe('2 of 3 per 1 h')
  })
})

describe('dates', () => {
  // 2026-12-07 18:20:31 UTC; the test's time zone is the machine's, so only the shape is fixed.
  const at = Date.UTC(2026, 11, 7, 18, 20, 31)

  it('follow the locale given, whatever the machine\'s', () => {
    expect(dateTimeText(at, 'zh-CN')).toMatch(/^2026\/12\/\d{1,2} \d{2}:\d{2}:31$/)
    expect(dateTimeText(at, 'en-US')).toMatch(/^12\/\d{1,2}\/26, \d{1,2}:\d{2}:31\s[AP]M$/)
    expect(timeText(at, 'zh-CN')).toMatch(/^\d{2}:\d{2}:31$/)
    expect(timeText(at, 'en-US')).toMatch(/^\d{1,2}:\d{2}:31\s[AP]M$/)
  })
})
