import { send } from '@koishijs/client'
import { type Transport, TransportError } from '../../webui/client/transport'

/** What the plugin's console listeners answer (see src/console-page.ts). */
type ConsoleReply = { value: unknown } | { error: { code: string; message: string; refusal?: TransportError['refusal'] } }

/**
 * The page's transport over Koishi's console socket: each method is the console listener
 * `dogu/<method>`. The console's own checks (plugin-auth's login and authority) come first;
 * their refusal, the bare text `unauthorized`, rejects as a `LOGIN` error the page words as
 * "log in first".
 */
export const consoleTransport: Transport = {
  async send(method, payload = {}) {
    let reply: ConsoleReply | undefined
    try {
      reply = await (send as (type: string, ...args: unknown[]) => Promise<ConsoleReply> | undefined)(`dogu/${method}`, payload)
    } catch (error) {
      if (error === 'unauthorized') throw new TransportError('LOGIN', 'log in to the console with the authority this page needs', 0)
      throw error instanceof Error ? error : new TransportError('CONSOLE', String(error), 0)
    }
    if (!reply) throw new TransportError('OFFLINE', 'the console is not connected', 0)
    if ('error' in reply) throw new TransportError(reply.error.code, reply.error.message, 0, reply.error.refusal)
    return reply.value as any
  },
}
