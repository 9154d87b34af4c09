import { iso } from '../../http/format.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { userBasic } from '../users/users.presenter.ts';
import type { User } from '../users/users.service.ts';
import { endpointUrl, type AlertRow, type IntegrationRow } from './alerts.service.ts';
import { metricImagePath, type MetricImageRow } from './metric-images.service.ts';

// Rows → wire JSON. Integrations and alerts are Bellows extensions (the reference serves them through GraphQL);
// the metric image is the reference's entity (`id`, `created_at`, `filename`, `file_path`, `url`, `url_text`).

/** An integration; `token` only in the answer that made it (creation, reset). */
export function integrationEntity(row: IntegrationRow, project: ProjectRow, base: string, token?: string) {
  return {
    id: row.id, name: row.name, type: row.type, active: !!row.active, url: endpointUrl(base, project, row),
    ...(token !== undefined ? { token } : {}), created_at: iso(row.created_at)!, updated_at: iso(row.updated_at)!,
  };
}

export function alertEntity(a: AlertRow, project: ProjectRow, base: string, ctx: { assignees: User[]; issueIid: number | null }) {
  return {
    id: a.id, iid: a.iid, project_id: a.project_id, title: a.title, description: a.description, severity: a.severity, status: a.status,
    started_at: iso(a.started_at)!, ended_at: iso(a.ended_at), events: a.events, monitoring_tool: a.monitoring_tool, service: a.service,
    hosts: JSON.parse(a.hosts) as string[], fingerprint: a.fingerprint, environment_name: a.environment_name, issue_iid: ctx.issueIid,
    assignees: ctx.assignees.map((u) => userBasic(u, base)), payload: JSON.parse(a.payload) as unknown,
    created_at: iso(a.created_at)!, updated_at: iso(a.updated_at)!,
    web_url: `${base.replace(/\/$/, '')}/${project.full_path}/-/alert_management/${a.iid}/details`,
  };
}

export function metricImageEntity(m: MetricImageRow, base: string) {
  return {
    id: m.id, created_at: iso(m.created_at)!, filename: m.filename, file_path: `${base.replace(/\/$/, '')}${metricImagePath(m)}`,
    url: m.url, url_text: m.url_text,
  };
}
