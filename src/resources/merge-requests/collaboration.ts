// Pushes by collaborators: whoever may update the target branch of an open merge request from a fork whose author
// allowed collaboration pushes to its source branch in the fork (the reference's `branch_allows_collaboration?`),
// through the API (rebase) and over git. The rule itself is policy.ts's `collaborationAllowsPush`.
import type { ServiceDeps } from '../../platform/deps.ts';
import type { Actor } from '../../platform/access/actor.ts';
import { canProject, collaborationAllowed, collaborationAllowsPush, type PolicyCollaboration } from '../../platform/access/policy.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { canPushBranch, loadBranchRules, matching, type BranchRule } from '../repository/protection.ts';
import { canMergeBy, levelIn, type MergeRequestRow } from './merge-requests.service.ts';

/** The reference's `can_update_branch?` on a merge request's target branch: push to it, or merge into it. */
async function canUpdateBranch(deps: ServiceDeps, actor: Actor, mr: MergeRequestRow, target: ProjectRow): Promise<boolean> {
  if (!actor.user) return false;
  if (await canMergeBy(deps, actor, mr)) return true;
  const level = await levelIn(deps.db, actor, target);
  return canProject(actor, 'push_code', target, level)
    && canPushBranch(deps.db, await loadBranchRules(deps.db, target.id), mr.target_branch, { userId: actor.user.id, level, admin: actor.admin });
}

/**
 * The branches of `project` the caller may push to as a collaborator (only `branch` when given): the source branches
 * of its open merge requests that allow collaboration, when the caller may update one's target branch. `rules` are
 * the project's protected branches, when already loaded.
 */
export async function collaborativeBranches(deps: ServiceDeps, actor: Actor, project: ProjectRow, o: { branch?: string; rules?: BranchRule[] } = {}): Promise<Set<string>> {
  const allowed = new Set<string>();
  if (!actor.user) return allowed;
  let q = deps.db.selectFrom('merge_requests').selectAll().where('source_project_id', '=', project.id)
    .where('state', '=', 'opened').where('allow_collaboration', '=', 1).where('target_project_id', '!=', project.id);
  if (o.branch !== undefined) q = q.where('source_branch', '=', o.branch);
  const open = await q.orderBy('id').limit(1000).execute();
  if (!open.length) return allowed;
  const rules = o.rules ?? await loadBranchRules(deps.db, project.id);
  for (const mr of open) {
    if (allowed.has(mr.source_branch)) continue;
    const target = await liveProjectById(deps, mr.target_project_id);
    if (!target) continue;
    const candidate: PolicyCollaboration = {
      allow_collaboration: mr.allow_collaboration, state: mr.state, target, source: project,
      sourceBranchProtected: matching(rules, mr.source_branch).length > 0, updatesTargetBranch: false,
    };
    // The caller's rights on the target are looked up only for a merge request that allows collaboration at all.
    if (!collaborationAllowed(candidate)) continue;
    candidate.updatesTargetBranch = await canUpdateBranch(deps, actor, mr, target);
    if (collaborationAllowsPush([candidate])) allowed.add(mr.source_branch);
  }
  return allowed;
}
