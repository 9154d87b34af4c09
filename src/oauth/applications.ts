import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../platform/deps.ts';
import type { Db } from '../platform/db/index.ts';
import type { OAuthApplicationsTable } from '../platform/db/schema.ts';
import { digest } from '../platform/crypto/tokens.ts';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import { isKnownScope, splitScopes } from './scopes.ts';
import { redirectUriProblem, splitRedirectUris } from './redirect-uri.ts';

export type Application = Selectable<OAuthApplicationsTable>;

export const MAX_ID = 2 ** 31 - 1;

export interface NewApplication {
  name: string;
  redirectUri: string;
  scopes: string[];
  confidential: boolean;
  ownerId: number | null;
}

/** Client secrets look like the reference's (`gloas-` and 64 hex digits); only their digest is kept. */
export function newClientSecret(): string {
  return `gloas-${randomBytes(32).toString('hex')}`;
}

function validate(input: NewApplication): void {
  const errors: Record<string, string[]> = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  if (!input.name.trim()) add('name', "can't be blank");
  else if (input.name.length > 255) add('name', 'is too long (maximum is 255 characters)');
  const uris = splitRedirectUris(input.redirectUri);
  if (uris.length === 0) add('redirect_uri', "can't be blank");
  for (const u of uris) {
    const p = redirectUriProblem(u);
    if (p) {
      add('redirect_uri', p);
      break;
    }
  }
  if (input.scopes.length === 0) add('scopes', "can't be blank");
  else if (!input.scopes.every(isKnownScope)) add('scopes', "doesn't match configured on the server.");
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

export async function createApplication(deps: ServiceDeps, input: NewApplication): Promise<{ app: Application; secret: string }> {
  validate(input);
  const secret = newClientSecret();
  const now = deps.clock.now();
  const app = await deps.db.insertInto('oauth_applications').values({
    owner_id: input.ownerId,
    name: input.name.trim(),
    uid: randomBytes(32).toString('hex'),
    secret_digest: digest(secret),
    redirect_uri: splitRedirectUris(input.redirectUri).join('\n'),
    scopes: [...new Set(input.scopes)].join(' '),
    confidential: input.confidential ? 1 : 0,
    created_at: now,
    updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return { app, secret };
}

/** A new secret; the old one stops working at once. */
export async function renewSecret(deps: ServiceDeps, app: Application): Promise<string> {
  const secret = newClientSecret();
  await deps.db.updateTable('oauth_applications').set({ secret_digest: digest(secret), updated_at: deps.clock.now() }).where('id', '=', app.id).execute();
  return secret;
}

/** Removes the application with its codes and tokens. */
export async function deleteApplication(deps: ServiceDeps, app: Application): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('oauth_access_tokens').where('application_id', '=', app.id).execute();
    await trx.deleteFrom('oauth_grants').where('application_id', '=', app.id).execute();
    await trx.deleteFrom('oauth_applications').where('id', '=', app.id).execute();
  });
}

export async function findByUid(deps: ServiceDeps, uid: string): Promise<Application | undefined> {
  return deps.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirst();
}

/** Every application of the instance, oldest first, for the administrators' list. */
export function applicationsQuery(db: Db) {
  return db.selectFrom('oauth_applications').selectAll().orderBy('id', 'asc');
}

/** An application of this owner (or any, for `ownerId` undefined); anything else is 404. */
export async function getApplicationOr404(deps: ServiceDeps, id: number, ownerId?: number): Promise<Application> {
  // Ids are 32-bit: a larger number cannot name an application (and would overflow the column type).
  if (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID) throw new NotFoundError('Application');
  let q = deps.db.selectFrom('oauth_applications').selectAll().where('id', '=', id);
  if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
  const app = await q.executeTakeFirst();
  if (!app) throw new NotFoundError('Application');
  return app;
}

export function applicationScopes(app: Application): string[] {
  return splitScopes(app.scopes);
}
