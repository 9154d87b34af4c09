import { Type } from '@sinclair/typebox';
import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, Enum, File, IdOrPath, Input, Int, Opt, PaginationParams, Str } from '../../http/schemas.ts';
import { paginateQuery } from '../../http/pagination.ts';
import { projectDenial } from '../../platform/access/policy.ts';
import { ForbiddenError, RuleError } from '../../platform/errors.ts';
import { usersByIds } from '../users/users.service.ts';
import {
  alertByIid, alertsQuery, assigneeIdsOfAlerts, createAlertIssue, createIntegration, deleteIntegration, findAlert, findIntegration,
  INTEGRATION_TYPES, integrationsQuery, issueIidsOf, resetIntegrationToken, SEVERITIES, STATUSES, updateAlert, updateIntegration, type AlertRow,
} from './alerts.service.ts';
import {
  createMetricImage, deleteMetricImage, findMetricImage, MAX_METRIC_IMAGE_BYTES, metricImagesQuery, updateMetricImage,
} from './metric-images.service.ts';
import { alertEntity, integrationEntity, metricImageEntity } from './alerts.presenter.ts';
import { Alert, AlertIntegration, MetricImage } from './alerts.schemas.ts';

const tags = ['alert_management'];
const extensionTags = ['alert_management', 'bellows-extensions'];
const base = (req: ApiRequest<any>) => req.server.config.externalUrl;

/** Alerts with their assignees and linked issues, a constant number of queries for any number of alerts. */
async function presentAlerts(req: ApiRequest<any>, rows: AlertRow[]) {
  const assignees = await assigneeIdsOfAlerts(req.server.db, rows.map((r) => r.id));
  const users = await usersByIds(req.server, [...new Set([...assignees.values()].flat())]);
  const issues = await issueIidsOf(req.server.db, rows.map((r) => r.issue_id).filter((id): id is number => id !== null));
  return rows.map((r) => alertEntity(r, req.project.project, base(req), {
    assignees: assignees.get(r.id)!.map((id) => users.get(id)).filter((u) => !!u),
    issueIid: r.issue_id === null ? null : (issues.get(r.issue_id) ?? null),
  }));
}

/**
 * The alert of a metric-image request, held to the alert ability as the reference: an alert it cannot find or may
 * not change is 403 (it authorizes a nil subject); reading an unknown or unreadable one is 404 "Alert not found".
 */
async function imageAlert(req: ApiRequest<any>, ability: 'read_alert_management_alert' | 'update_alert_management_alert'): Promise<AlertRow> {
  const { project, level } = req.project;
  const alert = await alertByIid(req.server.db, project.id, req.input.alert_iid);
  const denied = projectDenial(req.actor, ability, project, level);
  if (ability === 'read_alert_management_alert') {
    if (!alert || denied) throw new RuleError('not_found', 'Alert not found');
  } else if (!alert || denied) {
    throw new ForbiddenError();
  }
  return alert;
}

const integrationInput = { id: IdOrPath(), integration_id: Int() };
const alertInput = { id: IdOrPath(), alert_iid: Int() };

export const alertRoutes: RouteDef<any>[] = [
  // ---- integrations (Bellows extensions: the reference manages them through GraphQL) ----
  {
    method: 'GET', url: '/projects/:id/alert_management/http_integrations', summary: "List a project's alert integrations", tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: Type.Array(AlertIntegration),
    input: Input({ id: IdOrPath(), ...PaginationParams }),
    handler: async (req, reply) => {
      const rows = await paginateQuery(req, reply, integrationsQuery(req.server.db, req.project.project.id));
      return rows.map((r) => integrationEntity(r, req.project.project, base(req)));
    },
  },
  {
    method: 'GET', url: '/projects/:id/alert_management/http_integrations/:integration_id', summary: 'One alert integration', tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: AlertIntegration,
    input: Input(integrationInput),
    handler: async (req) => integrationEntity(await findIntegration(req.server.db, req.project.project.id, req.input.integration_id), req.project.project, base(req)),
  },
  {
    method: 'POST', url: '/projects/:id/alert_management/http_integrations', summary: 'Create an alert integration; its token is shown this once', tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: AlertIntegration,
    input: Input({ id: IdOrPath(), name: Str(), type: Opt(Enum(INTEGRATION_TYPES, { default: 'http' })), active: Opt(Bool({ default: true })) }),
    handler: async (req) => {
      const { row, token } = await createIntegration(req.server, req.project.project.id, { name: req.input.name, type: req.input.type ?? 'http', active: req.input.active ?? true });
      return integrationEntity(row, req.project.project, base(req), token);
    },
  },
  {
    method: 'PUT', url: '/projects/:id/alert_management/http_integrations/:integration_id', summary: "Rename, enable or disable an alert integration", tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: AlertIntegration,
    input: Input({ ...integrationInput, name: Opt(Str()), active: Opt(Bool()) }),
    handler: async (req) => {
      const row = await findIntegration(req.server.db, req.project.project.id, req.input.integration_id);
      return integrationEntity(await updateIntegration(req.server, row, { name: req.input.name, active: req.input.active }), req.project.project, base(req));
    },
  },
  {
    method: 'POST', url: '/projects/:id/alert_management/http_integrations/:integration_id/reset_token', summary: "Replace an alert integration's token; the new one is shown this once", tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: AlertIntegration,
    input: Input(integrationInput),
    handler: async (req) => {
      const row = await findIntegration(req.server.db, req.project.project.id, req.input.integration_id);
      const { row: updated, token } = await resetIntegrationToken(req.server, row);
      return integrationEntity(updated, req.project.project, base(req), token);
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/alert_management/http_integrations/:integration_id', summary: 'Remove an alert integration (its alerts stay)', tags: extensionTags,
    access: 'authenticated', project: { ability: 'admin_operations' },
    response: null,
    input: Input(integrationInput),
    handler: async (req) => {
      await deleteIntegration(req.server, await findIntegration(req.server.db, req.project.project.id, req.input.integration_id));
      return undefined;
    },
  },
  // ---- alerts (Bellows extensions) ----
  {
    method: 'GET', url: '/projects/:id/alert_management_alerts', summary: "List a project's alerts", tags: extensionTags,
    access: 'public', project: { ability: 'read_alert_management_alert' },
    response: Type.Array(Alert),
    input: Input({
      id: IdOrPath(), status: Opt(Enum(STATUSES)), severity: Opt(Enum(SEVERITIES)), search: Opt(Str()),
      order_by: Opt(Enum(['started_at', 'severity'] as const, { default: 'started_at' })), sort: Opt(Enum(['asc', 'desc'] as const, { default: 'desc' })),
      ...PaginationParams,
    }),
    handler: async (req, reply) => {
      const i = req.input;
      const rows = await paginateQuery(req, reply, alertsQuery(req.server.db, req.project.project.id, {
        status: i.status, severity: i.severity, search: i.search || undefined, order_by: i.order_by ?? 'started_at', sort: i.sort ?? 'desc',
      }));
      return presentAlerts(req, rows);
    },
  },
  {
    method: 'GET', url: '/projects/:id/alert_management_alerts/:alert_iid', summary: 'One alert', tags: extensionTags,
    access: 'public', project: { ability: 'read_alert_management_alert' },
    response: Alert,
    input: Input(alertInput),
    handler: async (req) => (await presentAlerts(req, [await findAlert(req.server.db, req.project.project.id, req.input.alert_iid)]))[0],
  },
  {
    method: 'PUT', url: '/projects/:id/alert_management_alerts/:alert_iid', summary: "Change an alert's status or assignees", tags: extensionTags,
    access: 'authenticated', project: { ability: 'update_alert_management_alert' },
    response: Alert,
    input: Input({ ...alertInput, status: Opt(Enum(STATUSES)), assignee_ids: Opt(Type.Array(Int())) }),
    handler: async (req) => {
      const { project } = req.project;
      const alert = await findAlert(req.server.db, project.id, req.input.alert_iid);
      const row = await updateAlert(req.server, req.actor, project, alert, { status: req.input.status, assignee_ids: req.input.assignee_ids });
      return (await presentAlerts(req, [row]))[0];
    },
  },
  {
    method: 'POST', url: '/projects/:id/alert_management_alerts/:alert_iid/create_issue', summary: 'Create an incident issue from an alert', tags: extensionTags,
    access: 'authenticated', project: { ability: 'update_alert_management_alert' },
    response: Alert,
    input: Input(alertInput),
    handler: async (req) => {
      const { project, level } = req.project;
      const alert = await findAlert(req.server.db, project.id, req.input.alert_iid);
      const { alert: row } = await createAlertIssue(req.server, req.actor, project, level, alert);
      return (await presentAlerts(req, [row]))[0];
    },
  },
  // ---- metric images (the spec's area, gitlab-areas.md §8) ----
  {
    method: 'POST', url: '/projects/:id/alert_management_alerts/:alert_iid/metric_images', summary: 'Upload a metric image to an alert', tags,
    access: 'authenticated', project: { ability: 'read_project' },
    response: MetricImage,
    input: Input({ ...alertInput, file: File({ description: 'the image (multipart), at most 1 MB', maxBytes: MAX_METRIC_IMAGE_BYTES }), url: Opt(Str()), url_text: Opt(Str()) }),
    handler: async (req) => {
      const alert = await imageAlert(req, 'update_alert_management_alert');
      const row = await createMetricImage(req.server, alert, { file: req.input.file, url: req.input.url, url_text: req.input.url_text });
      return metricImageEntity(row, base(req));
    },
  },
  {
    method: 'GET', url: '/projects/:id/alert_management_alerts/:alert_iid/metric_images', summary: "An alert's metric images, oldest first", tags,
    access: 'public', project: { ability: 'read_project' },
    response: Type.Array(MetricImage),
    input: Input(alertInput),
    handler: async (req) => {
      const alert = await imageAlert(req, 'read_alert_management_alert');
      return (await metricImagesQuery(req.server.db, alert.id).execute()).map((m) => metricImageEntity(m, base(req)));
    },
  },
  {
    method: 'PUT', url: '/projects/:id/alert_management_alerts/:alert_iid/metric_images/:metric_image_id', summary: "Change a metric image's link", tags,
    access: 'authenticated', project: { ability: 'read_project' },
    response: MetricImage,
    input: Input({ ...alertInput, metric_image_id: Int(), url: Opt(Str()), url_text: Opt(Str()) }),
    handler: async (req) => {
      const alert = await imageAlert(req, 'update_alert_management_alert');
      const image = await findMetricImage(req.server.db, alert.id, req.input.metric_image_id);
      return metricImageEntity(await updateMetricImage(req.server, image, { url: req.input.url, url_text: req.input.url_text }), base(req));
    },
  },
  {
    method: 'DELETE', url: '/projects/:id/alert_management_alerts/:alert_iid/metric_images/:metric_image_id', summary: 'Remove a metric image and its file', tags,
    access: 'authenticated', project: { ability: 'read_project' },
    response: null,
    input: Input({ ...alertInput, metric_image_id: Int() }),
    handler: async (req) => {
      const alert = await imageAlert(req, 'update_alert_management_alert');
      await deleteMetricImage(req.server, await findMetricImage(req.server.db, alert.id, req.input.metric_image_id));
      return undefined;
    },
  },
];
