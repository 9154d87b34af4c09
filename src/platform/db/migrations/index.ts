import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';
import * as m0001 from './0001_core.ts';
import * as m0002 from './0002_groups.ts';
import * as m0003 from './0003_projects.ts';
import * as m0004 from './0004_repository.ts';
import * as m0005 from './0005_oauth.ts';
import * as m0006 from './0006_instance_settings.ts';
import * as m0007 from './0007_project_settings.ts';
import * as m0008 from './0008_project_row_version.ts';
import * as m0009 from './0009_runners_token_digest.ts';
import * as m0010 from './0010_user_profile.ts';
import * as m0011 from './0011_planning.ts';
import * as m0012 from './0012_jobs.ts';
import * as m0013 from './0013_issues.ts';
import * as m0014 from './0014_storage_moves.ts';
import * as m0015 from './0015_groups_projects.ts';
import * as m0016 from './0016_issue_list_indexes.ts';
import * as m0017 from './0017_group_pending_delete.ts';
import * as m0018 from './0018_merge_requests.ts';
import * as m0019 from './0019_snippets_wikis.ts';
import * as m0021 from './0021_alerts.ts';
import * as m0022 from './0022_application_settings.ts';
import * as m0023 from './0023_multi_machine.ts';
import * as m0024 from './0024_suggestions.ts';
import * as m0025 from './0025_search.ts';
import * as m0026 from './0026_webhooks.ts';
import * as m0027 from './0027_notification_mail.ts';
import * as m0028 from './0028_spam.ts';
import * as m0029 from './0029_snippet_moves_group_wikis.ts';
import * as m0031 from './0031_group_hooks.ts';
import * as m0032 from './0032_project_search.ts';
import * as m0034 from './0034_merge_requests_target_status.ts';
import * as m0035 from './0035_jobs_due_by_kind.ts';
import * as m0036 from './0036_read_epoch.ts';

export interface VersionedMigration {
  name: string;
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

// Applied in this order, each once; add new files at the end with the next number.
export const migrations: VersionedMigration[] = [
  { name: '0001_core', up: m0001.up },
  { name: '0006_instance_settings', up: m0006.up },
  { name: '0007_project_settings', up: m0007.up },
  { name: '0002_groups', up: m0002.up },
  { name: '0005_oauth', up: m0005.up },
  { name: '0003_projects', up: m0003.up },
  { name: '0004_repository', up: m0004.up },
  { name: '0008_project_row_version', up: m0008.up },
  { name: '0009_runners_token_digest', up: m0009.up },
  { name: '0010_user_profile', up: m0010.up },
  { name: '0011_planning', up: m0011.up },
  { name: '0012_jobs', up: m0012.up },
  { name: '0013_issues', up: m0013.up },
  { name: '0014_storage_moves', up: m0014.up },
  { name: '0015_groups_projects', up: m0015.up },
  { name: '0016_issue_list_indexes', up: m0016.up },
  { name: '0017_group_pending_delete', up: m0017.up },
  { name: '0018_merge_requests', up: m0018.up },
  { name: '0019_snippets_wikis', up: m0019.up },
  { name: '0021_alerts', up: m0021.up },
  { name: '0022_application_settings', up: m0022.up },
  { name: '0023_multi_machine', up: m0023.up },
  { name: '0024_suggestions', up: m0024.up },
  { name: '0025_search', up: m0025.up },
  { name: '0026_webhooks', up: m0026.up },
  { name: '0027_notification_mail', up: m0027.up },
  { name: '0028_spam', up: m0028.up },
  { name: '0029_snippet_moves_group_wikis', up: m0029.up },
  { name: '0031_group_hooks', up: m0031.up },
  { name: '0032_project_search', up: m0032.up },
  { name: '0034_merge_requests_target_status', up: m0034.up },
  { name: '0035_jobs_due_by_kind', up: m0035.up },
  { name: '0036_read_epoch', up: m0036.up },
];
