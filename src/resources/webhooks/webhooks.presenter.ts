import { iso } from '../../http/format.ts';
import { alertStatus, customHeaders, type WebHookRow } from './webhooks.service.ts';

// Row -> the reference's ProjectHook and GroupHook entities (Hook's fields, then the project or group hook's), same
// order. The token is never shown; custom header values are masked.

function hook(h: WebHookRow, now: number) {
  const status = alertStatus(h, now);
  return {
    id: h.id,
    url: h.url,
    name: h.name ?? '',
    description: h.description ?? '',
    created_at: iso(h.created_at)!,
    push_events: !!h.push_events,
    tag_push_events: !!h.tag_push_events,
    merge_requests_events: !!h.merge_requests_events,
    repository_update_events: !!h.repository_update_events,
    enable_ssl_verification: !!h.enable_ssl_verification,
    alert_status: status,
    disabled_until: status === 'temporarily_disabled' ? iso(h.disabled_until) : null,
    url_variables: [] as Array<{ key: string }>,
    push_events_branch_filter: h.push_events_branch_filter,
    branch_filter_strategy: h.branch_filter_strategy,
    custom_webhook_template: null,
    custom_headers: Object.keys(customHeaders(h)).map((key) => ({ key })),
  };
}

export function projectHook(h: WebHookRow, now: number) {
  return {
    ...hook(h, now),
    project_id: h.project_id!,
    issues_events: !!h.issues_events,
    confidential_issues_events: !!h.confidential_issues_events,
    note_events: !!h.note_events,
    confidential_note_events: !!h.confidential_note_events,
    pipeline_events: !!h.pipeline_events,
    wiki_page_events: !!h.wiki_page_events,
    deployment_events: !!h.deployment_events,
    feature_flag_events: !!h.feature_flag_events,
    job_events: !!h.job_events,
    releases_events: !!h.releases_events,
    milestone_events: !!h.milestone_events,
    emoji_events: !!h.emoji_events,
    resource_access_token_events: !!h.resource_access_token_events,
  };
}

export function groupHook(h: WebHookRow, now: number) {
  return {
    ...hook(h, now),
    group_id: h.group_id!,
    issues_events: !!h.issues_events,
    confidential_issues_events: !!h.confidential_issues_events,
    note_events: !!h.note_events,
    confidential_note_events: !!h.confidential_note_events,
    pipeline_events: !!h.pipeline_events,
    wiki_page_events: !!h.wiki_page_events,
    job_events: !!h.job_events,
    deployment_events: !!h.deployment_events,
    feature_flag_events: !!h.feature_flag_events,
    releases_events: !!h.releases_events,
    milestone_events: !!h.milestone_events,
    subgroup_events: !!h.subgroup_events,
    emoji_events: !!h.emoji_events,
    resource_access_token_events: !!h.resource_access_token_events,
    member_events: !!h.member_events,
    vulnerability_events: !!h.vulnerability_events,
    project_events: !!h.project_events,
  };
}
