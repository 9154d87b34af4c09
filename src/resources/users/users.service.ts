import { removeAvatar, withAvatar } from '../../platform/storage/avatars.ts';
import type { UploadedFile } from '../../platform/storage/uploads.ts';
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { UsersTable } from '../../platform/db/schema.ts';
import { hashPassword } from '../../platform/crypto/passwords.ts';
import { digest } from '../../platform/crypto/tokens.ts';
import { ConflictError, ForbiddenError, NotFoundError, RuleError, ValidationError } from '../../platform/errors.ts';
import { containsText, isUniqueViolation } from '../../platform/db/dialect.ts';
import { parseDateTime } from '../../http/params.ts';
import type { Actor } from '../../http/auth.ts';
import { Visibility } from '../../platform/membership.ts';
import { removeRepository, snippetRepositoryPath } from '../projects/repository.ts';

export type User = Selectable<UsersTable>;

// Names a namespace path may take: letters, digits, '_', '-', '.', not starting with '-' or ending in '.', '.git' or '.atom'.
export const PATH_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
// The reference reserves its top-level routes for top-level namespaces only (users and top-level groups);
// below a namespace, projects and subgroups may not take the names of its project wildcard routes (`/-/`,
// `/tree/`, `/blob/`...), which would be read as those routes (Gitlab::PathRegex).
const TOP_LEVEL_RESERVED = new Set(['-', 'api', 'oauth', 'users', 'admin', 'help', 'profile', 'dashboard', 'explore', 'groups', 'projects', 'assets', 'search', 'public', 'uploads', '.well-known']);
const NESTED_RESERVED = new Set(['-', 'badges', 'blame', 'blob', 'builds', 'commits', 'create', 'create_dir', 'edit', 'files', 'find_file', 'new', 'preview', 'raw', 'refs', 'tree', 'update', 'wikis']);

/** `level`: a top-level namespace path, or the path of a project or subgroup inside a namespace. */
export function pathProblem(path: string, level: 'top' | 'nested' = 'top'): string | null {
  if (!PATH_RE.test(path) || /\.(git|atom)$/i.test(path) || path.endsWith('.')) {
    return "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
  }
  if ((level === 'top' ? TOP_LEVEL_RESERVED : NESTED_RESERVED).has(path.toLowerCase())) return `${path} is a reserved name`;
  return null;
}

export const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;

export interface CreateUserInput {
  username: string;
  name: string;
  email: string;
  password?: string | null;
  admin?: boolean;
  userType?: 'human' | 'project_bot' | 'group_bot';
  skipConfirmation?: boolean;
  bio?: string;
  location?: string;
  website_url?: string;
  organization?: string;
  job_title?: string;
  public_email?: string | null;
  private_profile?: boolean;
  can_create_group?: boolean;
  projects_limit?: number;
  external?: boolean;
  note?: string | null;
  /** A new avatar (a file part), or null to remove it. */
  avatar?: UploadedFile | null;
}

export async function usernameTaken(deps: ServiceDeps, username: string, exceptUserId?: number): Promise<boolean> {
  const lower = username.toLowerCase();
  const u = await deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['username']), '=', lower)).executeTakeFirst();
  if (u && u.id !== exceptUserId) return true;
  const ns = await deps.db.selectFrom('namespaces').select(['id', 'owner_id', 'kind']).where('full_path_lower', '=', lower).executeTakeFirst();
  return !!ns && !(ns.kind === 'user' && ns.owner_id === exceptUserId);
}

export async function emailTaken(deps: ServiceDeps, email: string, exceptUserId?: number): Promise<boolean> {
  const u = await deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst();
  return !!u && u.id !== exceptUserId;
}

// Longest values the user columns (and the reference's validations) take; longer is a validation error, not a
// database error.
const TEXT_LIMITS: Record<string, number> = {
  username: 255, name: 255, email: 255, public_email: 255, location: 255, website_url: 255, organization: 255, job_title: 200,
};

function tooLong(input: object, add: (k: string, m: string) => void): void {
  for (const [k, max] of Object.entries(TEXT_LIMITS)) {
    const v = (input as Record<string, unknown>)[k];
    if (typeof v === 'string' && v.length > max) add(k, `is too long (maximum is ${max} characters)`);
  }
}

export async function createUser(deps: ServiceDeps, input: CreateUserInput): Promise<User> {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!input.username) add('username', "can't be blank");
  else {
    const p = pathProblem(input.username);
    if (p) add('username', p);
    else if (await usernameTaken(deps, input.username)) add('username', 'has already been taken');
  }
  if (!input.name) add('name', "can't be blank");
  if (!input.email) add('email', "can't be blank");
  else if (!EMAIL_RE.test(input.email)) add('email', 'is invalid');
  else if (await emailTaken(deps, input.email)) add('email', 'has already been taken');
  if (input.password !== undefined && input.password !== null && input.password.length < 8) add('password', 'is too short (minimum is 8 characters)');
  tooLong(input, add);
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const now = deps.clock.now();
  const passwordDigest = input.password ? await hashPassword(input.password) : null;
  return withAvatar(deps.config.dataDir, 'user', input.avatar ?? undefined, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    let user = await trx.insertInto('users').values({
      username: input.username,
      name: input.name,
      email: input.email,
      public_email: input.public_email ?? null,
      password_digest: passwordDigest,
      state: 'active',
      admin: input.admin ? 1 : 0,
      user_type: input.userType ?? 'human',
      bio: input.bio ?? '',
      location: input.location ?? '',
      website_url: input.website_url ?? '',
      organization: input.organization ?? '',
      job_title: input.job_title ?? '',
      private_profile: input.private_profile ? 1 : 0,
      can_create_group: input.can_create_group === false ? 0 : 1,
      projects_limit: input.projects_limit ?? 100000,
      external: input.external ? 1 : 0,
      note: input.note ?? null,
      created_at: now,
      updated_at: now,
      last_activity_on: null,
      current_sign_in_at: null,
      confirmed_at: input.skipConfirmation === false ? null : now,
    }).returningAll().executeTakeFirstOrThrow();
    // Bots have no personal namespace: their tokens act only through their memberships.
    if (user.user_type === 'human') {
      const ns = await trx.insertInto('namespaces').values({
        name: user.name, path: user.username, kind: 'user', parent_id: null, owner_id: user.id,
        visibility_level: Visibility.public, description: '', full_path: user.username,
        full_path_lower: user.username.toLowerCase(), full_name: user.name, traversal: '/',
        request_access_enabled: 1, project_creation_level: 'developer', subgroup_creation_level: 'maintainer',
        created_at: now, updated_at: now,
      }).returning('id').executeTakeFirstOrThrow();
      await trx.updateTable('namespaces').set({ traversal: `/${ns.id}/` }).where('id', '=', ns.id).execute();
    }
    if (input.avatar) {
      await applyAvatar(trx, user.id);
      user = await trx.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    }
    return user;
  }));
}

export type UpdateUserInput = Partial<Omit<CreateUserInput, 'userType' | 'skipConfirmation'>> & {
  /** An identity at an external provider: the user's one for `provider` is made or changed (both or neither given). */
  provider?: string;
  extern_uid?: string;
};

export interface Identity { provider: string; extern_uid: string }

/** The identities of these users, by user id, oldest first. */
export async function identitiesOf(deps: ServiceDeps, userIds: number[]): Promise<Map<number, Identity[]>> {
  const out = new Map<number, Identity[]>(userIds.map((id) => [id, []]));
  if (!userIds.length) return out;
  const rows = await deps.db.selectFrom('identities').select(['user_id', 'provider', 'extern_uid']).where('user_id', 'in', userIds).orderBy('id').execute();
  for (const r of rows) out.get(r.user_id)!.push({ provider: r.provider, extern_uid: r.extern_uid });
  return out;
}

export async function updateUser(deps: ServiceDeps, user: User, input: UpdateUserInput): Promise<User> {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (input.username !== undefined && input.username !== user.username) {
    const p = pathProblem(input.username);
    if (p) add('username', p);
    else if (await usernameTaken(deps, input.username, user.id)) add('username', 'has already been taken');
  }
  if (input.email !== undefined && input.email !== user.email) {
    if (!EMAIL_RE.test(input.email)) add('email', 'is invalid');
    else if (await emailTaken(deps, input.email, user.id)) add('email', 'has already been taken');
  }
  if (input.name !== undefined && !input.name) add('name', "can't be blank");
  if (input.password !== undefined && input.password !== null && input.password.length < 8) add('password', 'is too short (minimum is 8 characters)');
  tooLong(input, add);
  const identity = input.provider !== undefined && input.extern_uid !== undefined ? { provider: input.provider, extern_uid: input.extern_uid } : null;
  if (identity) {
    if (!identity.provider.trim()) add('identities.provider', "can't be blank");
    if (!identity.extern_uid.trim()) add('identities.extern_uid', "can't be blank");
    for (const [k, v] of Object.entries(identity)) if (v.length > 255) add(`identities.${k}`, 'is too long (maximum is 255 characters)');
    const other = await deps.db.selectFrom('identities').select('id').where('provider', '=', identity.provider)
      .where('extern_uid_lower', '=', identity.extern_uid.toLowerCase()).where('user_id', '<>', user.id).executeTakeFirst();
    if (other) add('identities.extern_uid', 'has already been taken');
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const set: Record<string, unknown> = { updated_at: deps.clock.now() };
  for (const k of ['username', 'name', 'email', 'bio', 'location', 'website_url', 'organization', 'job_title', 'note', 'projects_limit'] as const) {
    if (input[k] !== undefined) set[k] = input[k];
  }
  if (input.public_email !== undefined) set.public_email = input.public_email || null;
  for (const k of ['admin', 'private_profile', 'can_create_group', 'external'] as const) {
    if (input[k] !== undefined) set[k] = input[k] ? 1 : 0;
  }
  if (input.password) set.password_digest = await hashPassword(input.password);
  const save = () => withAvatar(deps.config.dataDir, 'user', input.avatar, (applyAvatar) => deps.db.transaction().execute(async (trx) => {
    await applyAvatar(trx, user.id);
    const updated = await trx.updateTable('users').set(set).where('id', '=', user.id).returningAll().executeTakeFirstOrThrow();
    if (identity) {
      const now = set.updated_at as number;
      const values = { ...identity, extern_uid_lower: identity.extern_uid.toLowerCase(), updated_at: now };
      const had = await trx.updateTable('identities').set(values).where('user_id', '=', user.id).where('provider', '=', identity.provider).executeTakeFirst();
      if (Number(had.numUpdatedRows) === 0) await trx.insertInto('identities').values({ ...values, user_id: user.id, created_at: now }).execute();
    }
    if (updated.username !== user.username || updated.name !== user.name) {
      // The personal namespace follows the user name; its projects' paths follow the namespace.
      const ns = await trx.selectFrom('namespaces').select(['id', 'full_path']).where('kind', '=', 'user').where('owner_id', '=', user.id).executeTakeFirst();
      if (ns) {
        await trx.updateTable('namespaces').set({ name: updated.name, path: updated.username, full_path: updated.username, full_path_lower: updated.username.toLowerCase(), full_name: updated.name, updated_at: set.updated_at as number }).where('id', '=', ns.id).execute();
        const projects = await trx.selectFrom('projects').select(['id', 'path']).where('namespace_id', '=', ns.id).execute();
        for (const p of projects) {
          const full = `${updated.username}/${p.path}`;
          await trx.updateTable('projects').set({ full_path: full, full_path_lower: full.toLowerCase() }).where('id', '=', p.id).execute();
        }
      }
    }
    return updated;
  }));
  try {
    return await save();
  } catch (e) {
    // Two requests giving the same identity at once: the second meets the unique index.
    if (identity && isUniqueViolation(e)) throw new ValidationError({ 'identities.extern_uid': ['has already been taken'] });
    throw e;
  }
}

export { checkAvatar } from '../../platform/storage/avatars.ts';

export type UserState = 'active' | 'blocked' | 'banned' | 'deactivated';

export async function setUserState(deps: ServiceDeps, user: User, state: UserState): Promise<User> {
  return deps.db.updateTable('users').set({ state, updated_at: deps.clock.now() }).where('id', '=', user.id).returningAll().executeTakeFirstOrThrow();
}

/** Banned users are blocked users too: they cannot sign in, and they must be unbanned, not activated. */
export function isBlocked(user: Pick<User, 'state'>): boolean {
  return user.state === 'blocked' || user.state === 'banned';
}

export type StateAction = 'block' | 'unblock' | 'ban' | 'unban' | 'deactivate' | 'activate';

/** Days without activity after which an administrator may deactivate a user. */
const MINIMUM_INACTIVE_DAYS = 90;

/**
 * The administrator's state changes of a user, with the reference's answers: `true` when the state changed,
 * `false` when an unblock or activation had nothing to do, `null` when the user already was in the target state
 * (block, deactivate). A change the state does not allow is refused with the reference's sentence.
 */
export async function changeUserState(deps: ServiceDeps, actorId: number, user: User, action: StateAction): Promise<boolean | null> {
  const state = user.state as UserState;
  const refuse = (text: string): never => { throw new RuleError('forbidden', text); };
  switch (action) {
    case 'block':
      if (user.user_type !== 'human') throw new ForbiddenError('An internal user cannot be blocked');
      if (user.id === actorId) throw new ForbiddenError('The API initiating user cannot be blocked by the API');
      if (isBlocked(user)) return null;
      await setUserState(deps, user, 'blocked');
      return true;
    case 'unblock':
      if (state === 'deactivated') throw new ForbiddenError('Deactivated users cannot be unblocked by the API');
      if (!isBlocked(user)) return false;
      await setUserState(deps, user, 'active');
      return true;
    case 'ban':
    case 'unban': {
      const allowed = action === 'ban' ? state === 'active' : state === 'banned';
      if (!allowed) refuse(`You cannot ${action} ${state} users.`);
      await setUserState(deps, user, action === 'ban' ? 'banned' : 'active');
      return true;
    }
    case 'deactivate': {
      if (state === 'deactivated') return null;
      if (isBlocked(user)) refuse('Error occurred. A blocked user cannot be deactivated');
      if (user.user_type !== 'human') refuse('Internal users cannot be deactivated');
      const since = deps.clock.now() - MINIMUM_INACTIVE_DAYS * 86_400_000;
      if (user.last_activity_on !== null && user.last_activity_on > since) {
        refuse(`The user you are trying to deactivate has been active in the past ${MINIMUM_INACTIVE_DAYS} days and cannot be deactivated`);
      }
      await setUserState(deps, user, 'deactivated');
      return true;
    }
    case 'activate':
      if (isBlocked(user)) throw new ForbiddenError('A blocked user must be unblocked to be activated');
      if (state !== 'deactivated') return false;
      await setUserState(deps, user, 'active');
      return true;
  }
}

export async function deleteUser(deps: ServiceDeps, user: User): Promise<void> {
  // The user's snippets (personal and in projects) go with them; their repositories once the rows are gone.
  const snippets = await deps.db.selectFrom('snippets').select(['id', 'repository_storage']).where('author_id', '=', user.id).execute();
  await deps.db.transaction().execute(async (trx) => {
    if (snippets.length) {
      const ids = snippets.map((x) => x.id);
      const noteIds = trx.selectFrom('notes').select('id').where('noteable_type', '=', 'Snippet').where('noteable_id', 'in', ids);
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute();
      await trx.deleteFrom('notes').where('noteable_type', '=', 'Snippet').where('noteable_id', 'in', ids).execute();
      await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Snippet').where('awardable_id', 'in', ids).execute();
      await trx.deleteFrom('snippets').where('id', 'in', ids).execute();
    }
    const ns = await trx.selectFrom('namespaces').select('id').where('kind', '=', 'user').where('owner_id', '=', user.id).executeTakeFirst();
    if (ns) {
      const projectIds = (await trx.selectFrom('projects').select('id').where('namespace_id', '=', ns.id).execute()).map((p) => p.id);
      if (projectIds.length) {
        await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', 'in', projectIds).execute();
        await trx.updateTable('projects').set({ pending_delete: 1 }).where('id', 'in', projectIds).execute();
      }
    }
    await trx.deleteFrom('members').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('identities').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('users').where('id', '=', user.id).execute();
  });
  // The row is gone first: a kill before this leaves an unreferenced file, never a row naming a missing one.
  await removeAvatar(deps.config.dataDir, 'user', user.id);
  for (const x of snippets) await removeRepository(snippetRepositoryPath(deps.config, x.repository_storage, x.id));
}

/** The users with these ids, by id; missing ids are absent. */
/** Users by id; `known` (e.g. the caller's row, read by this request's authentication) is not read again. */
export async function usersByIds(deps: ServiceDeps, ids: number[], known?: User | null): Promise<Map<number, User>> {
  const wanted = known ? ids.filter((id) => id !== known.id) : ids;
  const users = wanted.length ? await deps.db.selectFrom('users').selectAll().where('id', 'in', wanted).execute() : [];
  const out = new Map<number, User>(users.map((u) => [u.id, u]));
  if (known && ids.includes(known.id)) out.set(known.id, known);
  return out;
}

/**
 * The users owning any of these e-mail addresses (case-insensitive): by their primary e-mail or a confirmed secondary
 * one, as the reference matches a commit's author to a user.
 */
export async function userIdsByEmails(deps: ServiceDeps, emails: string[]): Promise<number[]> {
  const list = [...new Set(emails.filter((e) => e.length > 0 && e.length <= 255).map((e) => e.toLowerCase()))];
  if (!list.length) return [];
  const [primary, secondary] = await Promise.all([
    deps.db.selectFrom('users').select('id').where((eb) => eb.fn('lower', ['email']), 'in', list).execute(),
    deps.db.selectFrom('emails').select('user_id').where('email_lower', 'in', list).where('confirmed_at', 'is not', null).execute(),
  ]);
  return [...new Set([...primary.map((u) => u.id), ...secondary.map((e) => e.user_id)])];
}

export async function findUser(deps: ServiceDeps, idOrUsername: string | number): Promise<User | undefined> {
  const q = deps.db.selectFrom('users').selectAll();
  const raw = String(idOrUsername);
  if (raw.includes('\u0000') || (/^\d+$/.test(raw) && Number(raw) > 2_147_483_647)) return undefined;
  if (typeof idOrUsername === 'number' || /^\d+$/.test(idOrUsername)) return q.where('id', '=', Number(idOrUsername)).executeTakeFirst();
  return q.where((eb) => eb(eb.fn('lower', ['username']), '=', idOrUsername.toLowerCase())).executeTakeFirst();
}

export async function getUserOr404(deps: ServiceDeps, idOrUsername: string | number): Promise<User> {
  const u = await findUser(deps, idOrUsername);
  if (!u) throw new NotFoundError('User');
  return u;
}

/** First start: the administrator `root`, its password, and optionally a fixed automation token. */
export async function ensureRoot(deps: ServiceDeps, opts: { password: string | null; token: string | null; passwordFile: string | null; writeFile?: (path: string, content: string) => void }): Promise<{ created: boolean; generatedPassword: string | null }> {
  const existing = await findUser(deps, 'root');
  let generatedPassword: string | null = null;
  let root = existing;
  if (!root) {
    const password = opts.password ?? (generatedPassword = randomBytes(18).toString('base64url'));
    root = await createUser(deps, { username: 'root', name: 'Administrator', email: 'admin@example.com', password, admin: true });
    if (generatedPassword && opts.passwordFile && opts.writeFile) {
      opts.writeFile(opts.passwordFile, `# The password of the root account, generated on first start. Change it, then delete this file.\nPassword: ${generatedPassword}\n`);
    }
  }
  if (opts.token) {
    const d = digest(opts.token);
    const have = await deps.db.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', d).executeTakeFirst();
    if (!have) {
      const now = deps.clock.now();
      await deps.db.insertInto('personal_access_tokens').values({
        user_id: root.id, name: 'BELLOWS_ROOT_TOKEN', description: 'registered from BELLOWS_ROOT_TOKEN at start-up', token_digest: d,
        scopes: 'api read_api read_user read_repository write_repository sudo admin_mode', impersonation: 0, revoked: 0,
        expires_at: null, last_used_at: null, created_at: now, updated_at: now,
      }).execute();
    }
  }
  return { created: !existing, generatedPassword };
}

export interface UserListFilter {
  username?: string; search?: string; active?: boolean; blocked?: boolean; external?: boolean; humans?: boolean; exclude_internal?: boolean;
  admins?: boolean; created_after?: string; created_before?: string; order_by?: 'id' | 'name' | 'username' | 'created_at' | 'updated_at'; sort?: 'asc' | 'desc';
}

/** The users list as the caller may see it; the filter is the request's and is narrowed in place for non-administrators. */
export function usersListQuery(deps: ServiceDeps, actor: Actor, i: UserListFilter) {
  // Anonymous callers may only look a single user up by username, never list everyone.
  if (!actor.user && !i.username) throw new ForbiddenError('Not authorized to access /api/v4/users');
  if (!actor.admin) {
    // Ordering and creation-time filters are for administrators; others get the default order.
    delete i.created_after;
    delete i.created_before;
    i.order_by = 'id';
    i.sort = 'desc';
  }
  let q = deps.db.selectFrom('users').selectAll();
  if (i.username) q = q.where((eb) => eb(eb.fn('lower', ['username']), '=', i.username!.toLowerCase()));
  if (i.search) {
    const term = i.search;
    q = q.where((eb) => eb.or([
      containsText('username', term),
      containsText('name', term),
      ...(actor.admin ? [containsText('email', term)] : [eb(eb.fn('lower', ['email']), '=', term.toLowerCase())]),
    ]));
  }
  if (i.active) q = q.where('state', '=', 'active');
  if (i.blocked) q = q.where('state', '=', 'blocked');
  if (i.humans || i.exclude_internal) q = q.where('user_type', '=', 'human');
  if (i.external && actor.admin) q = q.where('external', '=', 1);
  if (i.admins && actor.admin) q = q.where('admin', '=', 1);
  if (i.created_after) q = q.where('created_at', '>=', parseDateTime(i.created_after)!);
  if (i.created_before) q = q.where('created_at', '<=', parseDateTime(i.created_before)!);
  const dir = i.sort === 'asc' ? 'asc' : 'desc';
  q = q.orderBy(i.order_by ?? 'id', dir);
  if ((i.order_by ?? 'id') !== 'id') q = q.orderBy('id', dir);
  return q;
}

/** The personal namespace ids of these users, by owner id. */
export async function personalNamespaceIds(deps: ServiceDeps, userIds: number[]): Promise<Map<number | null, number>> {
  const ns = userIds.length ? await deps.db.selectFrom('namespaces').select(['id', 'owner_id']).where('kind', '=', 'user').where('owner_id', 'in', userIds).execute() : [];
  return new Map(ns.map((n) => [n.owner_id, n.id]));
}

/** The reference answers a clash with an existing user with 409 and this text, before any other validation message. */
export async function refuseTaken(deps: ServiceDeps, input: { email?: string; username?: string }, exceptUserId?: number): Promise<void> {
  const other = (q: any) => (exceptUserId === undefined ? q : q.where('id', '!=', exceptUserId));
  if (input.email) {
    const hit = await other(deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', input.email!.toLowerCase()))).executeTakeFirst();
    if (hit) throw new ConflictError('Email has already been taken');
  }
  if (input.username) {
    const hit = await other(deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['username']), '=', input.username!.toLowerCase()))).executeTakeFirst();
    if (hit) throw new ConflictError('Username has already been taken');
  }
}
