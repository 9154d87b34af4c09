import { randomBytes } from 'node:crypto';
import type { ServiceDeps } from '../../platform/deps.ts';
import { BadRequestError } from '../../platform/errors.ts';
import { DAY_MS } from '../access-tokens/access-tokens.service.ts';
import { AccessLevel } from '../../platform/membership.ts';
import type { Actor } from '../../http/auth.ts';
import { createUser } from '../users/users.service.ts';
import { createPersonalAccessToken, revokeToken, type TokenRow } from '../access-tokens/access-tokens.service.ts';
import type { MemberSource } from './members.service.ts';

// Group and project access tokens: each is a personal access token of its own bot user, and the bot
// is a member of the group or project with the token's role, so the ordinary rules apply to it.

export const BOT_SCOPES = ['api', 'read_api', 'read_repository', 'write_repository'] as const;

const label = (s: MemberSource) => (s.type === 'Namespace' ? 'group' : 'project');

/** Who manages tokens: Owners of a group, Maintainers of a project (administrators always). */
export function canManageTokens(actor: Actor, source: MemberSource): boolean {
  return actor.admin || source.level >= (source.type === 'Namespace' ? AccessLevel.OWNER : AccessLevel.MAINTAINER);
}

export function tokensQuery(deps: ServiceDeps, source: MemberSource) {
  return deps.db.selectFrom('personal_access_tokens')
    .innerJoin('resource_bots', 'resource_bots.user_id', 'personal_access_tokens.user_id')
    .selectAll('personal_access_tokens').select('resource_bots.access_level as bot_access_level')
    .where('resource_bots.source_type', '=', source.type).where('resource_bots.source_id', '=', source.id)
    .where('personal_access_tokens.impersonation', '=', 0);
}

export type ResourceTokenRow = TokenRow & { bot_access_level: number };

export async function createResourceToken(
  deps: ServiceDeps,
  actor: Actor,
  source: MemberSource,
  input: { name: string; scopes: string[]; expiresAt: string | null; accessLevel: number; description?: string | null },
): Promise<{ row: ResourceTokenRow; token: string }> {
  if (!canManageTokens(actor, source)) throw new BadRequestError(`User does not have permission to create ${label(source)} access token`);
  if (source.type === 'Project' && input.accessLevel >= AccessLevel.OWNER && source.level < AccessLevel.OWNER) {
    throw new BadRequestError('Could not provision owner access to project access token');
  }
  if (!actor.admin && input.accessLevel > source.level) {
    throw new BadRequestError("Access level of the token can't be greater the access level of the user who created the token");
  }
  const host = new URL(deps.config.externalUrl).hostname;
  const suffix = randomBytes(16).toString('hex');
  const username = `${label(source)}_${source.id}_bot_${suffix}`;
  const bot = await createUser(deps, {
    username, name: input.name || `${label(source)} bot`, email: `${username}@noreply.${host}`, password: null,
    userType: source.type === 'Namespace' ? 'group_bot' : 'project_bot', skipConfirmation: true, can_create_group: false, projects_limit: 0,
  });
  try {
    const { row, token } = await createPersonalAccessToken(deps, bot, { name: input.name, scopes: input.scopes, expiresAt: input.expiresAt, description: input.description });
    const now = deps.clock.now();
    await deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('resource_bots').values({ user_id: bot.id, source_type: source.type, source_id: source.id, access_level: input.accessLevel, created_at: now }).execute();
      await trx.insertInto('members').values({
        // The token's own expiry ends the bot's access; the membership itself does not expire.
        source_type: source.type, source_id: source.id, user_id: bot.id, access_level: input.accessLevel,
        expires_at: null, created_by_id: actor.user?.id ?? null, created_at: now, updated_at: now,
      }).execute();
    });
    return { row: { ...row, bot_access_level: input.accessLevel }, token };
  } catch (e) {
    // Nothing of a half-made token stays behind.
    await deps.db.deleteFrom('users').where('id', '=', bot.id).execute();
    throw e;
  }
}

/** Revokes the token and retires its bot: the membership goes and the account is blocked. */
export async function revokeResourceToken(deps: ServiceDeps, actor: Actor, source: MemberSource, row: ResourceTokenRow): Promise<void> {
  if (!canManageTokens(actor, source)) {
    const [who, bot] = await Promise.all([
      deps.db.selectFrom('users').select('name').where('id', '=', actor.user!.id).executeTakeFirstOrThrow(),
      deps.db.selectFrom('users').select('name').where('id', '=', row.user_id).executeTakeFirstOrThrow(),
    ]);
    throw new BadRequestError(`${who.name} cannot delete ${bot.name}`);
  }
  await revokeToken(deps, row);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('members').where('user_id', '=', row.user_id).execute();
    await trx.updateTable('users').set({ state: 'blocked', updated_at: deps.clock.now() }).where('id', '=', row.user_id).execute();
  });
}

/**
 * Replaces a token by a new one for the same bot (same name, scopes and role) and revokes the old one.
 * Without an expiry date the new token lasts one week, as the reference does.
 */
export async function rotateResourceToken(deps: ServiceDeps, row: ResourceTokenRow, expiresAt: string | null): Promise<{ row: ResourceTokenRow; token: string }> {
  if (row.revoked) throw new BadRequestError('Token already revoked');
  const now = deps.clock.now();
  const weekLater = new Date(now - (now % DAY_MS) + 7 * DAY_MS).toISOString().slice(0, 10);
  const { row: fresh, token } = await createPersonalAccessToken(deps, { id: row.user_id }, {
    name: row.name, scopes: row.scopes.split(' ').filter(Boolean), expiresAt: expiresAt ?? weekLater, description: row.description,
  });
  await revokeToken(deps, row);
  return { row: { ...fresh, bot_access_level: row.bot_access_level }, token };
}
