import ElementPlus from 'element-plus'
import form from 'schemastery-vue'
import type { App } from 'vue'
import { createI18n } from 'vue-i18n'
import { TRANSPORT } from './context'
import KMarkdown from './components/KMarkdown.vue'
import enUS from './locales/en-US.yml'
import zhCN from './locales/zh-CN.yml'
import type { Transport } from './transport'
import 'element-plus/dist/index.css'
import './styles.css'

export const LOCALES = ['zh-CN', 'en-US'] as const

/** zh-CN when the browser prefers Chinese (or the user chose it before), otherwise en-US. */
export function preferredLocale(languages: readonly string[] = navigator.languages, saved?: string | null): typeof LOCALES[number] {
  if (saved === 'zh-CN' || saved === 'en-US') return saved
  for (const language of languages) {
    if (/^zh\b/i.test(language)) return 'zh-CN'
    if (/^en\b/i.test(language)) return 'en-US'
  }
  return 'en-US'
}

/**
 * Installs what the console's components need on a Vue app: Element Plus and
 * schemastery-vue (the form renderer), a `k-markdown` component for descriptions, the
 * i18n messages, and the transport. A host with its own Vue app and i18n (Koishi's
 * console) calls it with its own transport.
 */
export function installConsole(app: App, transport: Transport, locale = preferredLocale(navigator.languages, savedLocale())): void {
  const i18n = createI18n({
    legacy: false,
    locale,
    fallbackLocale: 'en-US',
    messages: { 'zh-CN': zhCN, 'en-US': enUS },
  })
  app.use(i18n)
  app.use(ElementPlus)
  app.use(form)
  app.component('k-markdown', KMarkdown)
  app.provide(TRANSPORT, transport)
}

function savedLocale(): string | null {
  try { return localStorage.getItem('dogu-console-locale') } catch { return null }
}
