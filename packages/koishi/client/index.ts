import type { Context } from '@koishijs/client'
import enUS from '../../webui/client/locales/en-US.yml'
import zhCN from '../../webui/client/locales/zh-CN.yml'
import DoguPage from './dogu-page.vue'

/**
 * The console extension of koishi-plugin-dogu: Dogu's debug page at `/dogu` in Koishi's
 * console, the same components as `@dogu/webui`'s standalone page. Built to ../dist with
 * `koishi-console build`; the plugin registers it with `ctx.console.addEntry`.
 */
export default (ctx: Context) => {
  // The page's texts join the console's own i18n (its locale setting chooses the language).
  ctx.$i18n.i18n.global.mergeLocaleMessage('zh-CN', zhCN)
  ctx.$i18n.i18n.global.mergeLocaleMessage('en-US', enUS)
  ctx.page({
    name: 'Dogu',
    path: '/dogu',
    icon: 'activity:default',
    order: 450,
    component: DoguPage,
  })
}
