/**
 * Who is calling and where. Hosts fill what they know; the runtime only reads it.
 * `authority` follows Koishi's convention: 1 is a normal user, 4 an admin, 5 the owner.
 */
export interface Session {
  /** A stable id for the conversation (a chat channel, a CLI session, a WebUI tab). */
  id: string
  userId?: string
  channelId?: string
  guildId?: string
  platform?: string
  authority?: number
  /** Working directory for tools that touch files, resolved inside their configured roots. */
  cwd?: string
}
