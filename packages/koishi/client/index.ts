import type { Context } from '@koishijs/client'
import type { Ref } from 'vue'
import enUS from '../../webui/client/locales/en-US.yml'
import zhCN from '../../webui/client/locales/zh-CN.yml'
import type { ConsolePageData } from '../src/console-page'
import DoguPage from './dogu-page.vue'
import { keepOpenedPage } from './keep-opened-page'

/** The page's route in the console. */
const PATH = '/dogu'

/**
 * The console extension of koishi-plugin-dogu: Dogu's debug page at `/dogu` in Koishi's
 * console, the same components as `@dogu/webui`'s standalone page. Built to ../dist with
 * `koishi-console build`; the plugin registers it with `ctx.console.addEntry`, whose data
 * (`ConsolePageData`) is this extension's config.
 */
export default (ctx: Context, data?: Ref<ConsolePageData | undefined>) => {
  // The page's texts join the console's own i18n (its locale setting chooses the language).
  ctx.$i18n.i18n.global.mergeLocaleMessage('zh-CN', zhCN)
  ctx.$i18n.i18n.global.mergeLocaleMessage('en-US', enUS)
  ctx.page({
    name: 'Dogu',
    path: PATH,
    icon: 'activity:default',
    order: 450,
    // With @koishijs/plugin-auth, a route with an authority is one it guards: a visitor not
    // logged in goes to its login page and comes back here once logged in (a direct link, a
    // reload). A route without one is left open, and plugin-auth's login that follows every
    // reload sends the page to /profile. Without plugin-auth nothing reads it.
    authority: data?.value?.authority ?? 4,
    component: DoguPage,
  })
  keepOpenedPage(ctx, PATH)
}
