import { send } from '@koishijs/client'
import { type Transport, TransportError } from '../../webui/client/transport'

/** What the plugin's console listeners answer (see src/console-page.ts). */
type ConsoleReply = { value: unknown } | { error: { code: string; message: string } }

/**
 * The page's transport over Koishi's console socket: each method is the console listener
 * `dogu/<method>`. The console's own checks (plugin-auth's login and authority) come first;
 * a refusal there rejects with the console's message.
 */
export const consoleTransport: Transport = {
  async send(method, payload = {}) {
    const reply = await (send as (type: string, ...args: unknown[]) => Promise<ConsoleReply> | undefined)(`dogu/${method}`, payload)
    if (!reply) throw new TransportError('OFFLINE', 'the console is not connected', 0)
    if ('error' in reply) throw new TransportError(reply.error.code, reply.error.message, 0)
    return reply.value as any
  },
}
