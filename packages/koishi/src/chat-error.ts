import { codedError } from '@dogu/core'

/**
 * Why a message could not reach a chat. The chat asker throws it when it cannot show a
 * question; the permission engine logs it and, when no other asker shows the request,
 * denies it at once instead of waiting for the timeout.
 */
export class ChatError extends codedError('ChatError', {
  NO_BOT: 'no bot of the session\'s platform is there to speak in its channel',
  SEND_FAILED: 'the bot could not send the message',
}) {}

export namespace ChatError {
  export type Code = keyof typeof ChatError.Code
}
