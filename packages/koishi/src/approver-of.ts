import type { Approver, ApproverPolicy } from '@dogu/core'
import type { Context, Session as KoishiSession } from 'koishi'
import { approverPermissions } from './koishi-permission'

/**
 * The user behind a chat message or a button press as the permission engine sees them:
 * their id and platform from the session, their authority as `ctx.permissions` resolves
 * it for a caller (Koishi's user table when a database is loaded, else the configured
 * default), and which of the Koishi permissions the questions' rules name (`approvers.
 * permissions`) they hold. Never from what the message says.
 */
export async function approverOf(ctx: Context, session: KoishiSession, policies: readonly Readonly<ApproverPolicy>[] = []): Promise<Approver> {
  const { authority } = await ctx.permissions.resolveSession(session)
  const approver: Approver = { id: session.userId!, platform: session.platform }
  if (authority !== undefined) approver.authority = authority
  // Only what some open question asks about is tested: most questions name no permission.
  const named = [...new Set(policies.flatMap((policy) => policy.permissions ?? []))]
  if (named.length) {
    const held = await approverPermissions(ctx, session, { permissions: named }, { authority })
    if (held.length) approver.permissions = held
  }
  return approver
}
