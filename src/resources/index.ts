import type { FastifyInstance } from 'fastify';
import { registerRoutes } from '../http/route.ts';
import type { ServiceDeps } from '../platform/deps.ts';
import { userRoutes } from './users/users.routes.ts';
import { accessTokenRoutes } from './access-tokens/access-tokens.routes.ts';
import { broadcastMessageRoutes } from './broadcast-messages/broadcast-messages.routes.ts';
import { spamLogJobs, spamLogRoutes } from './spam-logs/spam-logs.routes.ts';
import { featureRoutes } from './features/features.routes.ts';
import { notificationSettingRoutes } from './notification-settings/notification-settings.routes.ts';
import { deployKeyRoutes } from './deploy-keys/deploy-keys.routes.ts';
import { suggestionRoutes } from './suggestions/suggestions.routes.ts';
import { sshKeyRoutes } from './ssh-keys/ssh-keys.routes.ts';
import { gpgKeyRoutes } from './gpg-keys/gpg-keys.routes.ts';
import { metadataRoutes } from './metadata/metadata.routes.ts';
import { userProfileRoutes } from './user-profile/user-profile.routes.ts';
import { errorTrackingRoutes } from './error-tracking/error-tracking.routes.ts';
import { featureFlagUserListRoutes } from './feature-flag-user-lists/feature-flag-user-lists.routes.ts';
import { groupJobs, groupRoutes } from './groups/groups.routes.ts';
import { namespaceRoutes } from './namespaces/namespaces.routes.ts';
import { memberRoutes } from './members/members.routes.ts';
import { resourceAccessTokenRoutes } from './members/resource-access-tokens.routes.ts';
import { applicationRoutes } from './applications/applications.routes.ts';
import { projectRoutes } from './projects/projects.routes.ts';
import { branchJobs, branchRoutes } from './repository/branches.routes.ts';
import { housekeepingJobs } from './repository/housekeeping.ts';
import { searchJobs } from './search/search.jobs.ts';
import { protectedBranchRoutes, protectedTagRoutes } from './repository/protected.routes.ts';
import { repositoryRoutes } from './repository/repository.routes.ts';
import { labelRoutes } from './labels/labels.routes.ts';
import { milestoneRoutes } from './milestones/milestones.routes.ts';
import { iterationJobs, iterationRoutes } from './iterations/iterations.routes.ts';
import { issueRoutes } from './issues/issues.routes.ts';
import { mergeRequestRoutes } from './merge-requests/merge-requests.routes.ts';
import { diffRoutes } from './merge-requests/diffs.routes.ts';
import { contextCommitRoutes } from './merge-requests/context-commits.routes.ts';
import { mergeJobs, mergeRoutes } from './merge-requests/merge.routes.ts';
import { commitRoutes } from './repository/commits.routes.ts';
import { storageMoveJobs, storageMoveRoutes } from './storage-moves/storage-moves.routes.ts';
import { applicationSettingRoutes } from './application-settings/application-settings.routes.ts';
import { importJobs } from './projects/projects.import.ts';
import { GIT_HTTP_SUFFIXES, registerGitHttp } from './git-http/git-http.routes.ts';
import { snippetRoutes } from './snippets/snippets.routes.ts';
import { wikiRoutes } from './wikis/wikis.routes.ts';
import { markdownRoutes } from './markdown/markdown.routes.ts';
import { registerStoredFiles } from './uploads/uploads.files.ts';
import { registerProjectUploadFiles, UPLOAD_FILE_SUFFIX, uploadRoutes } from './uploads/uploads.routes.ts';
import { uploadJobs } from './uploads/uploads.service.ts';
import { alertRoutes } from './alerts/alerts.routes.ts';
import { searchRoutes } from './search/search.routes.ts';
import { ALERT_NOTIFY_SUFFIXES, registerAlertNotifications } from './alerts/notify.routes.ts';
import { registerMetricImageFiles } from './alerts/metric-images.files.ts';
import { notificationJobs } from './notifications/notifications.jobs.ts';
import { registerUnsubscribe } from './notifications/unsubscribe.routes.ts';
import { webhookJobs, webhookRoutes } from './webhooks/webhooks.routes.ts';

/** What the routes below a project's full path end with (http/project-paths.ts folds those paths for the router). */
export const PROJECT_PATH_SUFFIXES: readonly string[] = [...Object.values(GIT_HTTP_SUFFIXES), UPLOAD_FILE_SUFFIX, ...Object.values(ALERT_NOTIFY_SUFFIXES)];

/** Every resource area of the API, registered in a fixed order. */
export async function registerResources(app: FastifyInstance): Promise<void> {
  registerRoutes(app, [
    ...metadataRoutes,
    ...applicationSettingRoutes,
    ...userRoutes,
    ...sshKeyRoutes,
    ...gpgKeyRoutes,
    ...userProfileRoutes,
    ...accessTokenRoutes,
    ...broadcastMessageRoutes,
    ...spamLogRoutes,
    ...featureRoutes,
    ...notificationSettingRoutes,
    ...deployKeyRoutes,
    ...suggestionRoutes,
    ...errorTrackingRoutes,
    ...featureFlagUserListRoutes,
    ...groupRoutes,
    ...namespaceRoutes,
    ...memberRoutes,
    ...resourceAccessTokenRoutes,
    ...applicationRoutes,
    ...projectRoutes,
    ...branchRoutes,
    ...protectedBranchRoutes,
    ...protectedTagRoutes,
    ...repositoryRoutes,
    ...labelRoutes,
    ...milestoneRoutes,
    ...iterationRoutes,
    ...issueRoutes,
    ...mergeRequestRoutes,
    ...diffRoutes,
    ...mergeRoutes,
    ...contextCommitRoutes,
    ...commitRoutes,
    ...storageMoveRoutes,
    ...searchRoutes,
    ...uploadRoutes,
    ...alertRoutes,
    ...snippetRoutes,
    ...wikiRoutes,
    ...markdownRoutes,
    ...webhookRoutes,
  ]);
  registerGitHttp(app);
  registerAlertNotifications(app);
  registerUnsubscribe(app);
  registerStoredFiles(app, (scope) => {
    registerProjectUploadFiles(scope, app);
    registerMetricImageFiles(scope, app);
  });
}

/** Every kind of background job the areas run (platform/jobs), defined once per application. */
export function registerJobs(deps: ServiceDeps & { log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void } }): void {
  for (const jobs of [branchJobs(deps), housekeepingJobs(deps), storageMoveJobs(deps), iterationJobs(deps), groupJobs(deps), uploadJobs(deps), importJobs(deps), mergeJobs(deps), notificationJobs(deps), webhookJobs(deps), spamLogJobs(deps), searchJobs(deps)]) {
    for (const [name, kind] of Object.entries(jobs)) deps.jobs.define(name, kind);
  }
}
