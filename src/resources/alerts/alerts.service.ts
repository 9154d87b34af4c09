import { createHash, randomBytes } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db/index.ts';
import type { AlertIntegrationsTable, AlertManagementAlertsTable } from '../../platform/db/schema.ts';
import { containsText, fitsIntColumn, isUniqueViolation } from '../../platform/db/dialect.ts';
import { nextIid } from '../../platform/db/internal-ids.ts';
import { digest, safeEqual } from '../../platform/crypto/tokens.ts';
import { canProject, type PolicyProject } from '../../platform/access/policy.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { projectAccessLevels, type ProjectRow } from '../../platform/membership.ts';
import { ForbiddenError, RuleError, UnauthorizedError, ValidationError } from '../../platform/errors.ts';
import { writeSystemNote, type Noteable } from '../notes/notes.service.ts';
import { sentence } from '../notes/system-notes.ts';
import { createIssue, type IssueRow } from '../issues/issues.service.ts';

// Alerts raised by monitoring tools. A project's integrations each have an endpoint and a token (shown once, kept
// as its SHA-256 digest, compared in constant time); a notification creates an alert with the project's next iid,
// or counts one more event on the open alert with the same fingerprint, or resolves it. People then work on the
// alert: its status, its assignees, an incident issue made from it; each change writes a system note on the alert.

export type IntegrationRow = Selectable<AlertIntegrationsTable>;
export type AlertRow = Selectable<AlertManagementAlertsTable>;

export const INTEGRATION_TYPES = ['http', 'prometheus'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info', 'unknown'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const STATUSES = ['triggered', 'acknowledged', 'resolved', 'ignored'] as const;
export type AlertStatus = (typeof STATUSES)[number];
export const ALERT_NOTEABLE = 'AlertManagement::Alert';

const TITLE_MAX = 200;
const TEXT_MAX = 1000;
const NAME_MAX = 255;

// ---------------------------------------------------------------------------------------------------------------
// Integrations

export function integrationsQuery(db: Db, projectId: number) {
  return db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).orderBy('id');
}

export async function findIntegration(db: Db, projectId: number, id: number): Promise<IntegrationRow> {
  const row = fitsIntColumn(id)
    ? await db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst()
    : undefined;
  if (!row) throw new RuleError('not_found', '404 Integration Not Found');
  return row;
}

function checkName(name: string | undefined, creating: boolean): void {
  if (name === undefined && !creating) return;
  const errors: string[] = [];
  if (!name?.trim()) errors.push("can't be blank");
  if ((name ?? '').length > NAME_MAX) errors.push(`is too long (maximum is ${NAME_MAX} characters)`);
  if (errors.length) throw new ValidationError({ name: errors });
}

const newToken = () => randomBytes(16).toString('hex');

/** A new integration and its token, which is shown this once. */
export async function createIntegration(deps: ServiceDeps, projectId: number, input: { name: string; type: IntegrationType; active: boolean }): Promise<{ row: IntegrationRow; token: string }> {
  checkName(input.name, true);
  const token = newToken();
  const now = deps.clock.now();
  const row = await deps.db.insertInto('alert_integrations').values({
    project_id: projectId, name: input.name.trim(), type: input.type, active: input.active ? 1 : 0,
    endpoint_identifier: randomBytes(8).toString('hex'), token_digest: digest(token), created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  return { row, token };
}

export async function updateIntegration(deps: ServiceDeps, row: IntegrationRow, input: { name?: string; active?: boolean }): Promise<IntegrationRow> {
  checkName(input.name, false);
  const set: Partial<IntegrationRow> = { updated_at: deps.clock.now() };
  if (input.name !== undefined) set.name = input.name.trim();
  if (input.active !== undefined) set.active = input.active ? 1 : 0;
  return deps.db.updateTable('alert_integrations').set(set).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
}

/** A new token replaces the old one at once; the old one authenticates nothing from then on. */
export async function resetIntegrationToken(deps: ServiceDeps, row: IntegrationRow): Promise<{ row: IntegrationRow; token: string }> {
  const token = newToken();
  const updated = await deps.db.updateTable('alert_integrations').set({ token_digest: digest(token), updated_at: deps.clock.now() })
    .where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
  return { row: updated, token };
}

/** Alerts the integration raised stay, without it (`integration_id` becomes null). */
export async function deleteIntegration(deps: ServiceDeps, row: IntegrationRow): Promise<void> {
  await deps.db.deleteFrom('alert_integrations').where('id', '=', row.id).execute();
}

/** The path segment of an integration's name in its endpoint URL (as Rails' `parameterize`). */
export function nameSlug(name: string): string {
  return name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9_-]+/g, '-').replace(/-{2,}/g, '-').replace(/^-|-$/g, '') || 'integration';
}

/** Where the monitoring tool sends its notifications. */
export function endpointUrl(base: string, project: Pick<ProjectRow, 'full_path'>, row: IntegrationRow): string {
  const root = `${base.replace(/\/$/, '')}/${project.full_path}`;
  return row.type === 'prometheus' ? `${root}/prometheus/alerts/notify.json` : `${root}/alerts/notify/${nameSlug(row.name)}/${row.endpoint_identifier}.json`;
}

/** The bearer token of a notification, checked against the candidates' digests in constant time. */
export function authenticateNotification(candidates: IntegrationRow[], token: string | null): IntegrationRow {
  if (!token) throw new UnauthorizedError();
  const given = digest(token);
  let found: IntegrationRow | null = null;
  for (const c of candidates) if (safeEqual(given, c.token_digest) && !found) found = c;
  if (!found) throw new UnauthorizedError();
  if (!found.active) throw new ForbiddenError();
  return found;
}

export async function integrationByEndpoint(db: Db, projectId: number, identifier: string): Promise<IntegrationRow | undefined> {
  if (!/^[0-9a-f]{16}$/.test(identifier)) return undefined;
  return db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).where('endpoint_identifier', '=', identifier).executeTakeFirst();
}

export async function prometheusIntegrations(db: Db, projectId: number): Promise<IntegrationRow[]> {
  return db.selectFrom('alert_integrations').selectAll().where('project_id', '=', projectId).where('type', '=', 'prometheus').orderBy('id').execute();
}

// ---------------------------------------------------------------------------------------------------------------
// Notifications

/** One alert of a notification, checked and normalised. */
export interface ParsedAlert {
  title: string;
  description: string | null;
  startedAt: number;
  endedAt: number | null;
  severity: Severity;
  monitoringTool: string | null;
  service: string | null;
  hosts: string[];
  /** SHA-1 of the sender's fingerprint; null: no deduplication. */
  fingerprint: string | null;
  environmentName: string | null;
  /** A recovery: resolves the open alert with this fingerprint. */
  resolved: boolean;
  payload: unknown;
}

/** A payload the endpoint cannot take: 422 with the reason. */
const unprocessable = (text: string) => new RuleError('unprocessable', text);

const sha1 = (s: string) => createHash('sha1').update(s, 'utf8').digest('hex');

/** The reference hashes the sender's fingerprint: arrays by their joined items, anything else by its text. */
function fingerprintOf(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  if (Array.isArray(v)) return sha1(v.flat(Infinity).map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(''));
  return sha1(typeof v === 'object' ? JSON.stringify(v) : String(v));
}

function parseTime(v: unknown, field: string): number | null {
  if (v === undefined || v === null || v === '') return null;
  const ms = typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw unprocessable(`${field} is not a valid date and time`);
  return ms;
}

function optText(o: Record<string, unknown>, field: string, max = TEXT_MAX): string | null {
  const v = o[field];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' && typeof v !== 'number') throw unprocessable(`${field} must be a string`);
  return String(v).slice(0, max) || null;
}

const SEVERITY_WORDS: Record<string, Severity> = {
  critical: 'critical', s1: 'critical', p1: 'critical',
  high: 'high', s2: 'high', p2: 'high', major: 'high',
  medium: 'medium', s3: 'medium', p3: 'medium', warn: 'medium', warning: 'medium',
  low: 'low', s4: 'low', p4: 'low', minor: 'low',
  info: 'info', s5: 'info', p5: 'info', debug: 'info', information: 'info', notice: 'info',
  unknown: 'unknown',
};

/** A sender's severity in the alert's words; none or an unknown word is critical, as the reference. */
function severityOf(v: unknown): Severity {
  return (typeof v === 'string' && SEVERITY_WORDS[v.trim().toLowerCase()]) || 'critical';
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The JSON body of a notification; anything else is a 400. */
export function parseBody(raw: unknown): unknown {
  if (typeof raw !== 'string' || raw.trim() === '') throw new RuleError('bad_request', 'The payload is empty; send a JSON object');
  try {
    return JSON.parse(raw);
  } catch {
    throw new RuleError('bad_request', 'The payload is not valid JSON');
  }
}

/** The generic payload (any HTTP client): `title` required, the rest optional. */
export function parseGeneric(body: unknown, now: number): ParsedAlert {
  if (!isObject(body)) throw new RuleError('bad_request', 'The payload must be a JSON object');
  const title = body.title;
  if (typeof title !== 'string' || !title.trim()) throw unprocessable('title is missing');
  const hostsRaw = body.hosts;
  let hosts: string[] = [];
  if (typeof hostsRaw === 'string') hosts = [hostsRaw];
  else if (Array.isArray(hostsRaw) && hostsRaw.every((h) => typeof h === 'string' || typeof h === 'number')) hosts = hostsRaw.map(String);
  else if (hostsRaw !== undefined && hostsRaw !== null) throw unprocessable('hosts must be a string or an array of strings');
  const startedAt = parseTime(body.start_time, 'start_time') ?? now;
  const endedAt = parseTime(body.end_time, 'end_time');
  return {
    title: title.trim().slice(0, TITLE_MAX),
    description: optText(body, 'description', 1_000_000),
    startedAt,
    endedAt,
    severity: severityOf(body.severity),
    monitoringTool: optText(body, 'monitoring_tool', 100),
    service: optText(body, 'service', 100),
    hosts: hosts.slice(0, 100).map((h) => h.slice(0, 255)),
    fingerprint: fingerprintOf(body.fingerprint),
    environmentName: optText(body, 'gitlab_environment_name', 255),
    resolved: endedAt !== null,
    payload: body,
  };
}

/** The Prometheus Alertmanager webhook payload: a batch of alerts, each firing or resolved. */
export function parsePrometheus(body: unknown): ParsedAlert[] {
  if (!isObject(body)) throw new RuleError('bad_request', 'The payload must be a JSON object');
  if (!Array.isArray(body.alerts)) throw unprocessable('alerts is missing');
  if (body.alerts.length > 1000) throw unprocessable('alerts has more than 1000 entries');
  return body.alerts.map((a: unknown, i: number) => {
    if (!isObject(a)) throw unprocessable(`alerts[${i}] must be an object`);
    const labels = isObject(a.labels) ? a.labels : {};
    const annotations = isObject(a.annotations) ? a.annotations : {};
    const title = [annotations.title, annotations.summary, labels.alertname].find((v) => typeof v === 'string' && v.trim());
    if (typeof title !== 'string') throw unprocessable(`alerts[${i}] has no title (annotations.title, annotations.summary or labels.alertname)`);
    const startsAt = parseTime(a.startsAt, `alerts[${i}].startsAt`);
    if (startsAt === null) throw unprocessable(`alerts[${i}].startsAt is missing`);
    const status = a.status ?? body.status;
    if (status !== 'firing' && status !== 'resolved') throw unprocessable(`alerts[${i}].status must be firing or resolved`);
    // Alertmanager's "still firing" end time is its year-1 zero time; a real one is only taken on a recovery.
    const endsAt = status === 'resolved' ? parseTime(a.endsAt, `alerts[${i}].endsAt`) : null;
    const sortedLabels = JSON.stringify(Object.keys(labels).sort().map((k) => [k, labels[k]]));
    const text = (v: unknown, max: number) => (typeof v === 'string' && v ? v.slice(0, max) : null);
    return {
      title: title.trim().slice(0, TITLE_MAX),
      description: text(annotations.description, 1_000_000),
      startedAt: startsAt,
      endedAt: endsAt,
      severity: severityOf(labels.severity),
      monitoringTool: 'Prometheus',
      service: text(labels.job, 100),
      hosts: typeof labels.instance === 'string' ? [labels.instance.slice(0, 255)] : [],
      fingerprint: sha1(`${String(a.startsAt)}/${sortedLabels}`),
      environmentName: text(labels.gitlab_environment_name, 255),
      resolved: status === 'resolved',
      payload: a,
    } satisfies ParsedAlert;
  });
}

const alertNoteable = (a: Pick<AlertRow, 'id' | 'iid' | 'project_id'>): Noteable =>
  ({ type: ALERT_NOTEABLE as Noteable['type'], id: a.id, iid: a.iid, projectId: a.project_id, locked: false });

const statusWord = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Applies one parsed alert inside `trx`: a new alert, one more event on the open one, or its recovery. */
async function applyParsed(trx: Db, projectId: number, integration: IntegrationRow, p: ParsedAlert, now: number): Promise<AlertRow | null> {
  const open = p.fingerprint === null ? undefined
    : await trx.selectFrom('alert_management_alerts').selectAll().where('project_id', '=', projectId)
      .where('fingerprint', '=', p.fingerprint).where('status', '<>', 'resolved').executeTakeFirst();
  const tool = p.monitoringTool ?? integration.name;
  if (open) {
    const set: Partial<AlertRow> = { updated_at: now, payload: JSON.stringify(p.payload) };
    if (p.resolved) Object.assign(set, { status: 'resolved', ended_at: p.endedAt ?? now });
    // Counted in the statement, so concurrent notifications each add their event.
    const row = await trx.updateTable('alert_management_alerts')
      .set((eb) => ({ ...set, ...(p.resolved ? {} : { events: eb('events', '+', 1) }) }))
      .where('id', '=', open.id).where('status', '<>', 'resolved').returningAll().executeTakeFirst();
    if (row) {
      if (p.resolved) {
        await writeSystemNote(trx, alertNoteable(row), null, `logged a recovery alert from **${tool}**`, now);
        await writeSystemNote(trx, alertNoteable(row), null, 'changed the status to **Resolved** by recovery alert notification', now);
      }
      return row;
    }
    // Resolved meanwhile by another request: what follows treats this notification as a new one.
  }
  // A recovery of an alert Bellows never saw open (Prometheus) resolves nothing.
  if (p.resolved && integration.type === 'prometheus') return null;
  const iid = await nextIid(trx, 'alert_management_alerts', projectId);
  const row = await trx.insertInto('alert_management_alerts').values({
    project_id: projectId, iid, integration_id: integration.id, issue_id: null, title: p.title, description: p.description,
    severity: p.severity, status: p.resolved ? 'resolved' : 'triggered', started_at: p.startedAt, ended_at: p.resolved ? (p.endedAt ?? now) : null,
    events: 1, monitoring_tool: p.monitoringTool, service: p.service, hosts: JSON.stringify(p.hosts), fingerprint: p.fingerprint,
    environment_name: p.environmentName, payload: JSON.stringify(p.payload), created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  await writeSystemNote(trx, alertNoteable(row), null, `logged an alert from **${tool}**`, now);
  return row;
}

/**
 * Stores a notification's alerts in one transaction: all of them or, on any failure, none. Two notifications
 * with one fingerprint arriving at once meet at the open-fingerprint unique index; the loser runs again and
 * then finds the alert the other one opened.
 */
export async function receiveAlerts(deps: ServiceDeps, projectId: number, integration: IntegrationRow, alerts: ParsedAlert[]): Promise<AlertRow[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.db.transaction().execute(async (trx) => {
        const out: AlertRow[] = [];
        const now = deps.clock.now();
        for (const p of alerts) {
          const row = await applyParsed(trx, projectId, integration, p, now);
          if (row) out.push(row);
        }
        return out;
      });
    } catch (e) {
      if (attempt < 3 && isUniqueViolation(e)) continue;
      throw e;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Alerts

export interface AlertFilter {
  status?: AlertStatus;
  severity?: Severity;
  search?: string;
  order_by: 'started_at' | 'severity';
  sort: 'asc' | 'desc';
}

const SEVERITY_RANK = sql<number>`case severity when 'critical' then 0 when 'high' then 1 when 'medium' then 2 when 'low' then 3 when 'info' then 4 else 5 end`;

export function alertsQuery(db: Db, projectId: number, f: AlertFilter) {
  let q = db.selectFrom('alert_management_alerts').selectAll().where('project_id', '=', projectId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.severity) q = q.where('severity', '=', f.severity);
  if (f.search) {
    const term = f.search;
    q = q.where((eb) => eb.or([
      containsText('title', term), containsText('description', term), containsText('service', term),
      containsText('monitoring_tool', term), containsText('hosts', term),
    ]));
  }
  if (f.order_by === 'severity') {
    // Most severe first when descending.
    q = q.orderBy(SEVERITY_RANK, f.sort === 'desc' ? 'asc' : 'desc');
  } else {
    q = q.orderBy('started_at', f.sort);
  }
  return q.orderBy('id', f.sort);
}

/** The project's alert by iid, or null. */
export async function alertByIid(db: Db, projectId: number, iid: number): Promise<AlertRow | null> {
  if (!fitsIntColumn(iid)) return null;
  return (await db.selectFrom('alert_management_alerts').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst()) ?? null;
}

export async function findAlert(db: Db, projectId: number, iid: number): Promise<AlertRow> {
  const row = await alertByIid(db, projectId, iid);
  if (!row) throw new RuleError('not_found', '404 Alert Not Found');
  return row;
}

export async function assigneeIdsOfAlerts(db: Db, alertIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(alertIds.map((id) => [id, []]));
  if (!alertIds.length) return out;
  const rows = await db.selectFrom('alert_management_alert_assignees').select(['alert_id', 'user_id']).where('alert_id', 'in', alertIds).orderBy('user_id').execute();
  for (const r of rows) out.get(r.alert_id)!.push(r.user_id);
  return out;
}

export async function issueIidsOf(db: Db, issueIds: number[]): Promise<Map<number, number>> {
  if (!issueIds.length) return new Map();
  const rows = await db.selectFrom('issues').select(['id', 'iid']).where('id', 'in', issueIds).execute();
  return new Map(rows.map((r) => [r.id, r.iid]));
}

/** Only users who may read the alert can be assigned to it (the reference's "Assignee has no permissions"). */
async function checkAssignees(deps: ServiceDeps, project: ProjectRow, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids.filter((id) => id > 0))];
  if (!wanted.length) return [];
  if (wanted.some((id) => !fitsIntColumn(id))) throw new RuleError('bad_request', 'Assignee has no permissions');
  const users = await deps.db.selectFrom('users').selectAll().where('id', 'in', wanted).execute();
  if (users.length !== wanted.length) throw new RuleError('bad_request', 'Assignee has no permissions');
  for (const u of users) {
    const level = (await projectAccessLevels(deps.db, u.id, [project])).get(project.id)?.effective ?? 0;
    const actor: Actor = { user: u, admin: !!u.admin, token: null, via: 'none', sudo: false };
    if (u.state !== 'active' || !canProject(actor, 'read_alert_management_alert', project, level)) throw new RuleError('bad_request', 'Assignee has no permissions');
  }
  return wanted;
}

/** `PUT .../alert_management_alerts/:iid`: the status and the assignees, with their system notes, in one transaction. */
export async function updateAlert(deps: ServiceDeps, actor: Actor, project: ProjectRow, alert: AlertRow, input: { status?: AlertStatus; assignee_ids?: number[] }): Promise<AlertRow> {
  const assignees = input.assignee_ids === undefined ? undefined : await checkAssignees(deps, project, input.assignee_ids);
  const now = deps.clock.now();
  const uid = actor.user?.id ?? null;
  return deps.db.transaction().execute(async (trx) => {
    if (input.status !== undefined && input.status !== 'resolved' && alert.status === 'resolved' && alert.fingerprint !== null) {
      const other = await trx.selectFrom('alert_management_alerts').select('id').where('project_id', '=', alert.project_id)
        .where('fingerprint', '=', alert.fingerprint).where('status', '<>', 'resolved').executeTakeFirst();
      if (other) throw new RuleError('bad_request', 'Cannot have multiple unresolved alerts');
    }
    const set: Partial<AlertRow> = { updated_at: now };
    if (input.status !== undefined && input.status !== alert.status) {
      set.status = input.status;
      set.ended_at = input.status === 'resolved' ? now : null;
    }
    const row = await trx.updateTable('alert_management_alerts').set(set).where('id', '=', alert.id).returningAll().executeTakeFirstOrThrow();
    if (set.status) await writeSystemNote(trx, alertNoteable(row), uid, `changed the status to **${statusWord(set.status)}**`, now);
    if (assignees !== undefined) {
      const current = (await assigneeIdsOfAlerts(trx, [alert.id])).get(alert.id)!;
      const added = assignees.filter((id) => !current.includes(id));
      const removed = current.filter((id) => !assignees.includes(id));
      if (removed.length) await trx.deleteFrom('alert_management_alert_assignees').where('alert_id', '=', alert.id).where('user_id', 'in', removed).execute();
      if (added.length) await trx.insertInto('alert_management_alert_assignees').values(added.map((user_id) => ({ alert_id: alert.id, user_id }))).execute();
      if (added.length || removed.length) {
        const names = new Map((await trx.selectFrom('users').select(['id', 'username']).where('id', 'in', [...added, ...removed]).execute()).map((u) => [u.id, `@${u.username}`]));
        const who = (list: number[]) => sentence(list.map((id) => names.get(id) ?? '@ghost'));
        const parts: string[] = [];
        if (added.length) parts.push(`assigned to ${who(added)}`);
        if (removed.length) parts.push(`unassigned ${who(removed)}`);
        await writeSystemNote(trx, alertNoteable(row), uid, parts.join(' and '), now);
      }
    }
    return row;
  });
}

function issueDescription(a: AlertRow): string {
  const lines = [
    `**Start time:** ${new Date(a.started_at).toISOString()}`,
    `**Severity:** ${a.severity}`,
    ...(a.service ? [`**Service:** ${a.service}`] : []),
    ...(a.monitoring_tool ? [`**Monitoring tool:** ${a.monitoring_tool}`] : []),
    ...(JSON.parse(a.hosts).length ? [`**Hosts:** ${(JSON.parse(a.hosts) as string[]).join(', ')}`] : []),
  ];
  return `${lines.join('\n')}\n\n${a.description ?? ''}`.trimEnd();
}

/**
 * `POST .../:iid/create_issue`: an incident issue from the alert through the issues service, linked to the alert
 * and noted on it ("created issue #N") in the issue's own transaction. An alert has at most one issue.
 */
export async function createAlertIssue(deps: ServiceDeps, actor: Actor, project: ProjectRow, level: number, alert: AlertRow): Promise<{ alert: AlertRow; issue: IssueRow }> {
  if (alert.issue_id !== null) throw new RuleError('unprocessable', 'An issue already exists');
  if (!canProject(actor, 'create_issue', project as PolicyProject, level)) throw new ForbiddenError();
  let linked: AlertRow | null = null;
  const { issue } = await createIssue(deps, { actor, project, level }, { title: alert.title, description: issueDescription(alert), issue_type: 'incident' }, async (trx, issue) => {
    // Only an alert still without an issue takes this one: a concurrent request that linked first wins.
    const res = await trx.updateTable('alert_management_alerts').set({ issue_id: issue.id, updated_at: deps.clock.now() })
      .where('id', '=', alert.id).where('issue_id', 'is', null).returningAll().executeTakeFirst();
    if (!res) throw new RuleError('unprocessable', 'An issue already exists');
    linked = res;
    await writeSystemNote(trx, alertNoteable(res), actor.user?.id ?? null, `created issue #${issue.iid}`, deps.clock.now());
  });
  return { alert: linked!, issue };
}
