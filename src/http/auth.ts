import type { FastifyRequest } from 'fastify';
import type { ServiceDeps } from '../platform/deps.ts';
import { digest, safeEqual } from '../platform/crypto/tokens.ts';
import {
  ForbiddenError, InsufficientScopeError, InvalidTokenError, NotFoundError, RuleError, UnauthorizedError,
} from '../platform/errors.ts';
import { anonymous, type Actor, type ResolvedToken, type UserRow } from '../platform/access/actor.ts';
import { readEpoch } from '../platform/read-epoch.ts';

export type { Actor, ResolvedToken, TokenKind, UserRow } from '../platform/access/actor.ts';
export { anonymous };

export const ALL_SCOPES = [
  'api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode',
  'openid', 'profile', 'email',
] as const;

/** Looks up a secret; returns null when it is not a token of its kind. */
export type TokenResolver = (secret: string) => Promise<ResolvedToken | null>;

export const SESSION_COOKIE = '_service_session';

export interface Authenticator {
  /** Resolves the caller: throws 401/403 for bad credentials. Scope and role checks come later, per route. */
  authenticate(req: FastifyRequest, params: Record<string, unknown>): Promise<Actor>;
  /** Refuses a token that lacks every scope the route accepts. */
  checkScopes(actor: Actor, accepted: string[]): void;
  /** OAuth and other token kinds register here; they are tried before personal access tokens. */
  addResolver(resolver: TokenResolver, priority?: 'first' | 'last'): void;
  findUserByIdOrUsername(value: string): Promise<UserRow | undefined>;
  userFromSession(cookie: string | undefined): Promise<{ user: UserRow; csrfDigest: string } | null>;
}

export function createAuthenticator(deps: ServiceDeps): Authenticator {
  const { db, config, clock } = deps;
  const resolvers: TokenResolver[] = [];
  // Recently resolved credentials (keyed by a digest of the presented values) are reused on reads, so a burst
  // of reads costs no lookups; processes outside the server, such as the command line, are seen within the window.
  // A state-changing request reuses those resolved at the read epoch it begins at (platform/read-epoch.ts).
  const credentials = deps.caches.define<string, { token: ResolvedToken; user: UserRow }>('credentials', { max: 10_000, epoch: true });

  const personal: TokenResolver = async (secret) => {
    const row = await db.selectFrom('personal_access_tokens')
      .select(['id', 'user_id', 'scopes', 'expires_at', 'revoked', 'impersonation', 'last_used_at'])
      .where('token_digest', '=', digest(secret)).executeTakeFirst();
    if (!row) return null;
    const now = clock.now();
    // Written at most once a minute so that reads do not turn into a write per request.
    if (!row.last_used_at || now - row.last_used_at > 60_000) {
      await db.updateTable('personal_access_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute();
    }
    return {
      kind: row.impersonation ? 'impersonation' : 'personal',
      id: row.id,
      userId: row.user_id,
      scopes: row.scopes.split(' ').filter(Boolean),
      expiresAt: row.expires_at,
      revoked: !!row.revoked,
    };
  };

  async function resolveToken(oauthValue: string | undefined, privateValue: string | undefined): Promise<ResolvedToken | null | 'unknown'> {
    // OAuth resolvers see the bearer/access_token value first; personal tokens are looked up from
    // private_token / PRIVATE-TOKEN, then from the same bearer value (a PAT may be sent as Bearer).
    if (oauthValue) {
      for (const r of resolvers) {
        const t = await r(oauthValue);
        if (t) return t;
      }
    }
    const candidates = [privateValue, oauthValue].filter((v): v is string => !!v);
    for (const v of candidates) {
      const t = await personal(v);
      if (t) return t;
    }
    return candidates.length > 0 || oauthValue ? 'unknown' : null;
  }

  async function findUserByIdOrUsername(value: string) {
    const q = db.selectFrom('users').selectAll();
    // Values no user can have (a NUL, an id beyond 32 bits) would only make the database complain.
    if (value.includes('\u0000') || (/^\d+$/.test(value) && Number(value) > 2_147_483_647)) return undefined;
    if (/^\d+$/.test(value)) return q.where('id', '=', Number(value)).executeTakeFirst();
    return q.where((eb) => eb(eb.fn('lower', ['username']), '=', value.toLowerCase())).executeTakeFirst();
  }

  async function userFromSession(cookie: string | undefined) {
    if (!cookie) return null;
    const now = clock.now();
    const s = await db.selectFrom('sessions').select(['id', 'user_id', 'csrf_digest', 'expires_at', 'last_seen_at'])
      .where('digest', '=', digest(cookie)).executeTakeFirst();
    if (!s || s.expires_at <= now) return null;
    const user = await db.selectFrom('users').selectAll().where('id', '=', s.user_id).executeTakeFirst();
    if (!user) return null;
    return { user, csrfDigest: s.csrf_digest };
  }

  function assertUsable(user: UserRow) {
    // A banned user is a blocked user (the reference's `blocked?`).
    if (user.state === 'blocked' || user.state === 'banned') throw new ForbiddenError('Your account has been blocked.');
  }

  return {
    addResolver(r, priority = 'last') {
      if (priority === 'first') resolvers.unshift(r);
      else resolvers.push(r);
    },
    findUserByIdOrUsername,
    userFromSession,

    async authenticate(req, params) {
      const authz = req.headers.authorization;
      const bearer = typeof authz === 'string' && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : undefined;
      const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      const oauthValue = str(params.access_token) ?? bearer;
      const header = req.headers['private-token'];
      const privateValue = str(params.private_token) ?? (typeof header === 'string' && header !== '' ? header : undefined);

      let actor: Actor = anonymous;
      // A state-changing request may revoke tokens or block users: nothing cached before it serves it, except what was
      // read at the read epoch it begins at (then nothing it depends on has changed since).
      const safeMethod = req.method === 'GET' || req.method === 'HEAD';
      if (!safeMethod) deps.caches.voidAll();
      const cacheKey = oauthValue || privateValue ? digest(`${oauthValue ?? ''}\0${privateValue ?? ''}`) : null;
      const epoch = cacheKey !== null && !safeMethod ? await readEpoch(db) : undefined;
      const found = cacheKey && await credentials.get(cacheKey, async () => {
        const token = await resolveToken(oauthValue, privateValue);
        if (!token || token === 'unknown') throw new UnauthorizedError();
        const user = await db.selectFrom('users').selectAll().where('id', '=', token.userId).executeTakeFirst();
        if (!user) throw new UnauthorizedError();
        return { token, user };
      }, epoch);
      if (found) {
        const { token, user } = found;
        const now = clock.now();
        if (token.expiresAt !== null && token.expiresAt <= now) throw new InvalidTokenError('expired');
        if (token.revoked) throw new InvalidTokenError('revoked');
        if (token.kind === 'impersonation' && !config.impersonationEnabled) throw new InvalidTokenError('impersonation_disabled');
        assertUsable(user);
        const admin = !!user.admin && (!config.adminMode || token.scopes.includes('admin_mode'));
        actor = { user, admin, token, via: 'token', sudo: false, epoch };
      } else {
        const cookie = req.cookies?.[SESSION_COOKIE];
        const session = await userFromSession(cookie);
        if (session) {
          const safe = req.method === 'GET' || req.method === 'HEAD';
          const csrf = req.headers['x-csrf-token'];
          // State-changing API calls with a cookie need the session's CSRF token; otherwise the cookie is ignored.
          if (safe || (typeof csrf === 'string' && safeEqual(digest(csrf), session.csrfDigest))) {
            assertUsable(session.user);
            actor = { user: session.user, admin: !!session.user.admin, token: null, via: 'session', sudo: false };
          }
        }
      }

      const sudoParam = params.sudo;
      const sudoHeader = req.headers.sudo;
      const sudoValue = sudoParam !== undefined && sudoParam !== '' ? String(sudoParam) : typeof sudoHeader === 'string' && sudoHeader !== '' ? sudoHeader : undefined;
      if (sudoValue !== undefined) {
        if (!actor.user) throw new UnauthorizedError();
        // Administrator rights as they stand for this token (admin mode may withhold them).
        if (!actor.admin) throw new ForbiddenError('Must be admin to use sudo');
        if (actor.via !== 'token') throw new ForbiddenError('Must be authenticated using an OAuth or personal access token to use sudo');
        if (!actor.token!.scopes.includes('sudo')) throw new InsufficientScopeError(['sudo']);
        const target = await findUserByIdOrUsername(sudoValue);
        if (!target) throw new RuleError('not_found', `404 User with ID or username '${sudoValue}' Not Found`);
        assertUsable(target);
        actor = { user: target, admin: !!target.admin, token: actor.token, via: 'token', sudo: true, epoch };
      }
      return actor;
    },

    checkScopes(actor, accepted) {
      if (!actor.token || actor.sudo) return;
      if (!accepted.some((s) => actor.token!.scopes.includes(s))) throw new InsufficientScopeError(accepted);
    },
  };
}

/** 401 unless signed in. */
export function requireUser(actor: Actor): UserRow {
  if (!actor.user) throw new UnauthorizedError();
  return actor.user;
}

/** 401 when anonymous, 403 when signed in without administrator rights. */
export function requireAdmin(actor: Actor): UserRow {
  const user = requireUser(actor);
  if (!actor.admin) throw new ForbiddenError();
  return user;
}

export { NotFoundError };
