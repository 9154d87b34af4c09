import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { ErrorTrackingClientKeysTable, ErrorTrackingSettingsTable } from '../../platform/db/schema.ts';
import { NotFoundError, RecordNotFoundError } from '../../platform/errors.ts';
import { fitsIntColumn } from '../../platform/db/dialect.ts';

export type SettingRow = Selectable<ErrorTrackingSettingsTable>;
export type ClientKeyRow = Selectable<ErrorTrackingClientKeysTable>;

export async function findSetting(db: Db, projectId: number): Promise<SettingRow | undefined> {
  return db.selectFrom('error_tracking_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

export async function getSettingOr404(db: Db, projectId: number): Promise<SettingRow> {
  const row = await findSetting(db, projectId);
  if (!row) throw new NotFoundError('Error Tracking Setting');
  return row;
}

/** PUT: creates the project's setting or replaces its state (one row per project, even under concurrent calls). */
export async function putSetting(deps: ServiceDeps, projectId: number, input: { active: boolean; integrated: boolean }): Promise<SettingRow> {
  const now = deps.clock.now();
  const enabled = input.active ? 1 : 0;
  const integrated = input.integrated ? 1 : 0;
  return deps.db.insertInto('error_tracking_settings')
    .values({ project_id: projectId, enabled, integrated, project_name: null, api_url: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('project_id').doUpdateSet({ enabled, integrated, updated_at: now }))
    .returningAll().executeTakeFirstOrThrow();
}

/** PATCH: changes an existing setting only; `integrated` stays as it is when not given. */
export async function patchSetting(deps: ServiceDeps, projectId: number, input: { active: boolean; integrated?: boolean }): Promise<SettingRow> {
  await getSettingOr404(deps.db, projectId);
  const row = await deps.db.updateTable('error_tracking_settings')
    .set({ enabled: input.active ? 1 : 0, ...(input.integrated !== undefined ? { integrated: input.integrated ? 1 : 0 } : {}), updated_at: deps.clock.now() })
    .where('project_id', '=', projectId).returningAll().executeTakeFirst();
  if (!row) throw new NotFoundError('Error Tracking Setting');
  return row;
}

export function clientKeysQuery(db: Db, projectId: number) {
  return db.selectFrom('error_tracking_client_keys').selectAll().where('project_id', '=', projectId).orderBy('id', 'asc');
}

/** A new client key; the public key is random, and public by nature (it travels inside the DSN). */
export async function createClientKey(deps: ServiceDeps, projectId: number): Promise<ClientKeyRow> {
  const now = deps.clock.now();
  return deps.db.insertInto('error_tracking_client_keys')
    .values({ project_id: projectId, active: 1, public_key: `glet_${randomBytes(16).toString('hex')}`, created_at: now, updated_at: now })
    .returningAll().executeTakeFirstOrThrow();
}

/** Deletes a client key of the project and returns it; 404 "Not found" when the project has no such key. */
export async function deleteClientKey(deps: ServiceDeps, projectId: number, keyId: number): Promise<ClientKeyRow> {
  if (!fitsIntColumn(keyId)) throw new RecordNotFoundError();
  const row = await deps.db.deleteFrom('error_tracking_client_keys').where('id', '=', keyId).where('project_id', '=', projectId).returningAll().executeTakeFirst();
  if (!row) throw new RecordNotFoundError();
  return row;
}

/** Where error events for the project are sent: this server's collector, authenticated by the key in the URL. */
export function trackerDsn(externalUrl: string, publicKey: string, projectId: number): string {
  const u = new URL(externalUrl);
  u.username = publicKey;
  u.password = '';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/v4/error_tracking/collector/${projectId}`;
  u.search = '';
  u.hash = '';
  return u.toString();
}
