import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';

// Response shapes of webhooks.presenter.ts, same field order.

const B = () => Type.Boolean();
const hookFields = {
  id: Type.Integer(), url: Type.String(), name: Type.String(), description: Type.String(), created_at: Iso(),
  push_events: B(), tag_push_events: B(), merge_requests_events: B(), repository_update_events: B(), enable_ssl_verification: B(),
  alert_status: Type.Union([Type.Literal('executable'), Type.Literal('temporarily_disabled'), Type.Literal('disabled')]),
  disabled_until: Nullable(Iso()),
  url_variables: Type.Array(Entity({ key: Type.String() })),
  push_events_branch_filter: Nullable(Type.String()), branch_filter_strategy: Type.String(),
  custom_webhook_template: Nullable(Type.String()),
  custom_headers: Type.Array(Entity({ key: Type.String() })),
};
export const ProjectHook = Entity({
  ...hookFields,
  project_id: Type.Integer(), issues_events: B(), confidential_issues_events: B(), note_events: B(), confidential_note_events: B(),
  pipeline_events: B(), wiki_page_events: B(), deployment_events: B(), feature_flag_events: B(), job_events: B(),
  releases_events: B(), milestone_events: B(), emoji_events: B(), resource_access_token_events: B(),
}, { description: 'ProjectHook' });

export const GroupHook = Entity({
  ...hookFields,
  group_id: Type.Integer(), issues_events: B(), confidential_issues_events: B(), note_events: B(), confidential_note_events: B(),
  pipeline_events: B(), wiki_page_events: B(), job_events: B(), deployment_events: B(), feature_flag_events: B(),
  releases_events: B(), milestone_events: B(), subgroup_events: B(), emoji_events: B(), resource_access_token_events: B(),
  member_events: B(), vulnerability_events: B(), project_events: B(),
}, { description: 'GroupHook' });

export const Created = Entity({ message: Type.String() }, { description: 'Created' });
