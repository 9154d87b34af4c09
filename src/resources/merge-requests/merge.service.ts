import type { ServiceDeps } from '../../platform/deps.ts';
import { attributeChanges, emitEvent } from '../../platform/events.ts';
import type { Db } from '../../platform/db/index.ts';
import { actorOf, serverActor, type Actor } from '../../platform/access/actor.ts';
import { canProject } from '../../platform/access/policy.ts';
import { ForbiddenError, RuleError, UnauthorizedError } from '../../platform/errors.ts';
import { RefMovedError } from '../../platform/git/errors.ts';
import type { Repository } from '../../platform/git/repository.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { settingsOf } from '../projects/projects.service.ts';
import { afterRefsChanged, queueRepositoryFacts, repoFor } from '../repository/repository.common.ts';
import { canPushBranch, loadBranchRules, matching } from '../repository/protection.ts';
import { usersByIds } from '../users/users.service.ts';
import { closeIssuesByMerge } from '../issues/issues.service.ts';
import {
  MERGE_REQUEST, MERGE_REQUEST_CHANGE_KEYS, canMergeBy, headRef, levelIn, recordDiffVersion, setRef, type MergeRequestRow, type MergeRequestScope,
} from './merge-requests.service.ts';
import { mergeStates, type MergeState } from './mergeability.ts';
import { collaborativeBranches } from './collaboration.ts';

// Merging a merge request on the repositories: the commits are written first (a merge commit, a squash commit, or
// none for a fast-forward), the target branch moves by compare-and-swap from the head the merge was computed on,
// then one transaction records the merge. The commit about to be published is recorded on the row before the ref
// moves (`in_progress_merge_commit_sha`), so a process killed between the ref move and the row is recognised and
// the merge finished by the next attempt; one killed before the ref moved leaves a stale mark that is cleared.

export interface MergeParams {
  merge_commit_message?: string;
  squash_commit_message?: string;
  squash?: boolean;
  should_remove_source_branch?: boolean;
  sha?: string;
}

const NOT_ALLOWED = '405 Method Not Allowed';
const CANNOT_MERGE = 'Branch cannot be merged';
/** How long a mark left by a merge that never moved the ref protects it from being cleared (another process may be mid-way). */
const STALE_MARK_MS = 60_000;
const CAS_ATTEMPTS = 3;

// ---------------------------------------------------------------------------------------------------------------
// Messages

/** The reference's closing pattern: "Closes #1", "fixes #2, #3 and #4", "Resolves: issue #5", any case. */
const CLOSING = /\b(?:clos(?:e|es|ed|ing)|fix(?:es|ed|ing)?|resolv(?:e|es|ed|ing)|implement(?:s|ed|ing)?):? +(?:issues? +)?#\d+(?:(?: *,? +and +| *,? *)(?:issues? +)?#\d+)*/gi;

/** Issue iids a text closes in its own project (`Closes #N`). */
export function closingIssueIids(text: string | null): number[] {
  if (!text) return [];
  const out = new Set<number>();
  for (const m of text.matchAll(CLOSING)) for (const n of m[0].matchAll(/#(\d+)/g)) if (n[1].length <= 9) out.add(Number(n[1]));
  return [...out];
}

/** "a", "a and b", "a, b and c" (Rails' to_sentence). */
const sentence = (xs: string[]) => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`);

/**
 * The reference's template rule: a line holding only an empty variable goes (with the blank line before it when a
 * blank line or the end follows), then every `%{name}` is replaced; unknown names stay as written.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  let message = template.replace(/\r/g, '');
  const used = [...new Set([...message.matchAll(/%\{(\w+)\}/g)].map((m) => m[1]))].filter((n) => n in values);
  const empty = used.filter((n) => !values[n]).map((n) => `%\\{${n}\\}`);
  if (empty.length) {
    const any = `(?:${empty.join('|')})`;
    message = message.replace(new RegExp(`\\n\\n${any}(\\n\\n|$)`, 'g'), '$1');
    message = message.replace(new RegExp(`^${any}\\n`, 'gm'), '');
  }
  return message.replace(/%\{(\w+)\}/g, (all, n: string) => (n in values ? values[n] : all));
}

interface MessageContext {
  mr: MergeRequestRow;
  project: ProjectRow;
  repo: Repository;
  state: MergeState;
  closes: number[];
  merger: { name: string; username: string; email: string };
  externalUrl: string;
}

async function templateValues(deps: ServiceDeps, c: MessageContext): Promise<Record<string, string>> {
  const { mr, project } = c;
  const commits = c.state.check && c.state.sourceSha && c.state.targetSha
    ? await c.repo.commitsBetween(c.state.targetSha, c.state.sourceSha, 100) : [];
  const raws = await Promise.all(commits.map((s) => c.repo.rawCommit(s)));
  const firstMultiline = raws.find((r) => r.message.trim().includes('\n'));
  const approvals = await deps.db.selectFrom('merge_request_approvals').select('user_id').where('merge_request_id', '=', mr.id).orderBy('id').execute();
  const reviewers = await deps.db.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', mr.id).execute();
  const people = await usersByIds(deps, [...approvals.map((a) => a.user_id), ...reviewers.map((r) => r.user_id)]);
  const trailer = (key: string, ids: number[]) => ids.map((id) => people.get(id)).filter((u) => u)
    .map((u) => `${key}: ${u!.name} <${u!.email}>`).join('\n');
  const coAuthors = new Map<string, string>();
  for (const r of raws) if (r.author.email && r.author.email !== c.merger.email) coAuthors.set(r.author.email, `Co-authored-by: ${r.author.name} <${r.author.email}>`);
  return {
    source_branch: mr.source_branch,
    target_branch: mr.target_branch,
    title: mr.title,
    issues: c.closes.length ? `Closes ${sentence(c.closes.map((n) => `#${n}`))}` : '',
    description: mr.description ?? '',
    reference: `${project.full_path}!${mr.iid}`,
    local_reference: `!${mr.iid}`,
    source_project_id: String(mr.source_project_id ?? ''),
    first_commit: raws[0]?.message.trim() ?? '',
    first_multiline_commit: (firstMultiline ?? raws[0])?.message.trim() ?? mr.title,
    url: `${c.externalUrl}/${project.full_path}/-/merge_requests/${mr.iid}`,
    approved_by: trailer('Approved-by', approvals.map((a) => a.user_id)),
    merged_by: `${c.merger.name} <${c.merger.email}>`,
    co_authored_by: [...coAuthors.values()].join('\n'),
    all_commits: raws.map((r) => `* ${r.message.trim()}`).join('\n\n'),
    reviewed_by: trailer('Reviewed-by', reviewers.map((r) => r.user_id)),
  };
}

/** The reference's default merge commit message (without the description). */
function defaultMergeMessage(c: MessageContext): string {
  const parts = [`Merge branch '${c.mr.source_branch}' into '${c.mr.target_branch}'`, c.mr.title];
  if (c.closes.length) parts.push(`Closes ${sentence(c.closes.map((n) => `#${n}`))}`);
  parts.push(`See merge request ${c.project.full_path}!${c.mr.iid}`);
  return parts.join('\n\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Merging

interface InProgress {
  target_ref_sha: string;
  merge_commit_sha: string | null;
  squash_commit_sha: string | null;
  user_id: number | null;
  at: number;
}

function paramsOf(mr: MergeRequestRow): Record<string, unknown> {
  try {
    return mr.merge_params ? (JSON.parse(mr.merge_params) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Issues of the project the merge closes: the description's closing references, when the project closes them. */
async function issuesToClose(deps: ServiceDeps, mr: MergeRequestRow, project: ProjectRow): Promise<number[]> {
  if (!settingsOf(project).autoclose_referenced_issues) return [];
  const iids = closingIssueIids(mr.description);
  const linked = await deps.db.selectFrom('merge_requests_closing_issues').innerJoin('issues', 'issues.id', 'merge_requests_closing_issues.issue_id')
    .select('issues.iid').where('merge_requests_closing_issues.merge_request_id', '=', mr.id).where('merge_requests_closing_issues.closes', '=', 1)
    .where('issues.project_id', '=', project.id).execute();
  return [...new Set([...iids, ...linked.map((l) => l.iid)])].sort((a, b) => a - b);
}

/**
 * Records a merge whose target ref already moved, in one transaction: the merged state and who merged, the merge's
 * commits, the state event, and the issues the merge request closes (`closing`, when the merge read them already).
 * A merge request already merged is left as is.
 */
async function recordMerge(
  deps: ServiceDeps, mr: MergeRequestRow, project: ProjectRow, p: InProgress, params: Record<string, unknown>, closing?: number[],
): Promise<MergeRequestRow> {
  const now = deps.clock.now();
  const closes = closing ?? (await issuesToClose(deps, mr, project));
  // Read before the transaction: SQLite has one connection, which the transaction holds.
  const merger = p.user_id !== null ? (await usersByIds(deps, [p.user_id])).get(p.user_id) ?? null : null;
  return deps.db.transaction().execute(async (trx) => {
    const done = await trx.updateTable('merge_requests').set({
      state: 'merged', merged_at: now, merged_by_id: p.user_id, merge_user_id: p.user_id, merge_commit_sha: p.merge_commit_sha,
      squash_commit_sha: p.squash_commit_sha, in_progress_merge_commit_sha: null, merge_jid: null, merge_status: 'can_be_merged',
      merge_error: null, merge_params: JSON.stringify(params), updated_at: now,
    }).where('id', '=', mr.id).where('state', '=', 'opened').returningAll().executeTakeFirst();
    if (!done) return (await trx.selectFrom('merge_requests').selectAll().where('id', '=', mr.id).executeTakeFirstOrThrow());
    await trx.insertInto('resource_state_events').values({ target_type: MERGE_REQUEST, target_id: mr.id, user_id: p.user_id, state: 'merged', created_at: now }).execute();
    await closeIssuesByMerge(deps, trx, project.id, closes, done, merger ? actorOf(merger) : serverActor, now);
    // The default branch moved: its statistics, languages and README are read after the answer, by a queued job.
    if (project.default_branch === mr.target_branch) await queueRepositoryFacts(deps, trx, project.id);
    if (p.user_id !== null) await emitEvent(deps, trx, { type: 'merge_request', action: 'merge', projectId: done.target_project_id, mergeRequestId: done.id, actorId: p.user_id, changes: attributeChanges(mr, done, MERGE_REQUEST_CHANGE_KEYS) });
    return done;
  });
}

/**
 * A merge cut short: when the commit it was publishing is on the target branch, the merge happened and is recorded
 * now; when it is not and the mark is old, the merge never moved the ref and the mark is cleared.
 */
export async function repairInterruptedMerge(deps: ServiceDeps, mr: MergeRequestRow): Promise<MergeRequestRow> {
  if (mr.state !== 'opened' || !mr.in_progress_merge_commit_sha) return mr;
  const project = await liveProjectById(deps, mr.target_project_id);
  if (!project) return mr;
  const repo = repoFor(deps.config, project);
  const params = paramsOf(mr);
  const p = params.in_progress as InProgress | undefined;
  const head = await repo.resolveCommit(`refs/heads/${mr.target_branch}`).catch(() => null);
  const landed = head !== null && (head === mr.in_progress_merge_commit_sha || (await repo.isAncestor(mr.in_progress_merge_commit_sha, head)));
  if (landed && p) {
    delete params.in_progress;
    return recordMerge(deps, mr, project, p, params);
  }
  if (p && deps.clock.now() - p.at < STALE_MARK_MS) return mr;
  delete params.in_progress;
  return (await deps.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: null, merge_jid: null, merge_params: JSON.stringify(params) })
    .where('id', '=', mr.id).where('in_progress_merge_commit_sha', '=', mr.in_progress_merge_commit_sha).returningAll().executeTakeFirst()) ?? mr;
}

/** The squash choice the project leaves: always, never, or the request's (else the merge request's own flag). */
export function squashOnMerge(project: ProjectRow, mr: MergeRequestRow, asked: boolean | undefined): boolean {
  const option = settingsOf(project).squash_option;
  if (option === 'always') return true;
  if (option === 'never') return false;
  return asked ?? !!mr.squash;
}

/**
 * `PUT .../merge`: the reference's answers, in its order: 401 unless the caller may merge into the target branch,
 * 405 when not open, a draft, a branch gone or threads unresolved that must be, 422 `Branch cannot be merged` on a
 * conflict or when the merge method needs a rebase first, 409 when `sha` is not the source head.
 */
export async function mergeMergeRequest(deps: ServiceDeps, scope: MergeRequestScope, found: MergeRequestRow, params: MergeParams): Promise<MergeRequestRow> {
  const actor = scope.actor;
  let mr = await repairInterruptedMerge(deps, found);
  if (!(await canMergeBy(deps, actor, mr))) throw new UnauthorizedError();
  if (mr.state !== 'opened') throw new RuleError('not_allowed', NOT_ALLOWED);
  if (mr.in_progress_merge_commit_sha) throw new RuleError('not_allowed', NOT_ALLOWED);
  const user = actor.user!;
  const merger = { name: user.name, username: user.username, email: user.email };
  for (let attempt = 1; ; attempt++) {
    const state = (await mergeStates(deps, [mr])).get(mr.id)!;
    if (['draft_status', 'broken_status', 'discussions_not_resolved'].includes(state.detailed)) throw new RuleError('not_allowed', NOT_ALLOWED);
    if (state.detailed !== 'mergeable' || !state.check) throw new RuleError('unprocessable', CANNOT_MERGE);
    if (params.sha !== undefined && params.sha !== mr.sha) throw new RuleError('conflict', `SHA does not match HEAD of source branch: ${mr.sha}`);
    const { project, repo, check } = state;
    const target = check.targetSha;
    const source = check.sourceSha;
    const settings = settingsOf(project);
    const squash = squashOnMerge(project, mr, params.squash);
    const closes = await issuesToClose(deps, mr, project);
    const ctx: MessageContext = { mr, project, repo, state, closes, merger, externalUrl: deps.config.externalUrl };
    const values = (settings.merge_commit_template || settings.squash_commit_template) ? await templateValues(deps, ctx) : {};
    const when = new Date(deps.clock.now());
    const me = { name: merger.name, email: merger.email, date: when };
    let squashSha: string | null = null;
    if (squash) {
      const message = params.squash_commit_message
        ?? (settings.squash_commit_template ? fillTemplate(settings.squash_commit_template, values) : mr.title);
      const authorRow = mr.author_id !== null ? (await usersByIds(deps, [mr.author_id])).get(mr.author_id) : undefined;
      const author = authorRow ? { name: authorRow.name, email: authorRow.email, date: when } : me;
      squashSha = await repo.commitTree({ tree: check.tree, parents: [target], message, author, committer: me });
    }
    const head = squashSha ?? source;
    let mergeSha: string | null = null;
    if (settings.merge_method !== 'ff') {
      const message = params.merge_commit_message
        ?? (settings.merge_commit_template ? fillTemplate(settings.merge_commit_template, values) : defaultMergeMessage(ctx));
      mergeSha = await repo.commitTree({ tree: check.tree, parents: [target, head], message, author: me });
    }
    const next = mergeSha ?? head;
    const mark: InProgress = { target_ref_sha: target, merge_commit_sha: mergeSha, squash_commit_sha: squashSha, user_id: user.id, at: deps.clock.now() };
    const mergeParams = {
      ...paramsOf(mr), sha: params.sha ?? mr.sha,
      ...(params.should_remove_source_branch !== undefined ? { should_remove_source_branch: params.should_remove_source_branch } : {}),
      ...(params.merge_commit_message !== undefined ? { commit_message: params.merge_commit_message } : {}),
      ...(params.squash_commit_message !== undefined ? { squash_commit_message: params.squash_commit_message } : {}),
    };
    // The mark first: from here a kill is recognised (see repairInterruptedMerge).
    const marked = await deps.db.updateTable('merge_requests').set({
      in_progress_merge_commit_sha: next, merge_user_id: user.id, squash: squash ? 1 : 0,
      merge_params: JSON.stringify({ ...mergeParams, in_progress: mark }),
    }).where('id', '=', mr.id).where('state', '=', 'opened').where('in_progress_merge_commit_sha', 'is', null).returningAll().executeTakeFirst();
    if (!marked) throw new RuleError('not_allowed', NOT_ALLOWED);
    try {
      await repo.updateRef(`refs/heads/${mr.target_branch}`, next, target);
    } catch (e) {
      // Nothing published: clear the mark. A push that moved the target is merged with on the next attempt.
      mr = (await deps.db.updateTable('merge_requests').set({ in_progress_merge_commit_sha: null, merge_params: mr.merge_params, squash: mr.squash })
        .where('id', '=', mr.id).returningAll().executeTakeFirstOrThrow());
      if (e instanceof RefMovedError && attempt < CAS_ATTEMPTS) continue;
      if (e instanceof RefMovedError) throw new RuleError('conflict', 'The target branch moved while merging. Try again.');
      throw e;
    }
    const merged = await recordMerge(deps, marked, project, mark, mergeParams, closes);
    await afterRefsChanged(deps, project, repo, [`refs/heads/${mr.target_branch}`], null, { factsQueued: project.default_branch === mr.target_branch });
    const remove = params.should_remove_source_branch ?? (paramsOf(mr).should_remove_source_branch === true || !!mr.force_remove_source_branch);
    if (remove) await removeSourceBranch(deps, actor, merged, source);
    return merged;
  }
}

/**
 * Deletes the merged source branch when the merger may (push to the source project, the branch neither protected
 * nor the default one) and it still points at the merged head; a branch that moved on is kept.
 */
async function removeSourceBranch(deps: ServiceDeps, actor: Actor, mr: MergeRequestRow, mergedHead: string): Promise<void> {
  if (mr.source_project_id === null || !actor.user) return;
  const project = await liveProjectById(deps, mr.source_project_id);
  if (!project || project.default_branch === mr.source_branch) return;
  const level = await levelIn(deps.db, actor, project);
  if (!canProject(actor, 'push_code', project, level)) return;
  if (matching(await loadBranchRules(deps.db, project.id), mr.source_branch).length) return;
  const repo = repoFor(deps.config, project);
  try {
    await repo.deleteBranch(mr.source_branch, mergedHead);
  } catch {
    return; // moved on or already gone: kept as it is
  }
  await afterRefsChanged(deps, project, repo, [`refs/heads/${mr.source_branch}`]);
}

/**
 * `GET .../merge_ref`: the merge commit the merge request would make now (target head and source head, the default
 * message, by its author at its creation time, so the same pair always gives the same commit), kept at
 * `refs/merge-requests/<iid>/merge`. 400 "Merge request is not mergeable" when it is not open or does not merge cleanly.
 */
export async function mergeRefHead(deps: ServiceDeps, mr: MergeRequestRow): Promise<string> {
  const state = (await mergeStates(deps, [mr])).get(mr.id);
  const check = state?.check;
  if (!state || !check || check.hasConflicts) throw new RuleError('bad_request', 'Merge request is not mergeable');
  const authorRow = mr.author_id !== null ? (await usersByIds(deps, [mr.author_id])).get(mr.author_id) : undefined;
  const who = { name: authorRow?.name ?? 'Bellows', email: authorRow?.email ?? 'bellows@localhost', date: new Date(mr.created_at) };
  const ctx: MessageContext = { mr, project: state.project, repo: state.repo, state, closes: [], merger: { ...who, username: '' }, externalUrl: deps.config.externalUrl };
  const sha = await state.repo.commitTree({ tree: check.tree, parents: [check.targetSha, check.sourceSha], message: defaultMergeMessage(ctx), author: who });
  await setRef(state.repo, `refs/merge-requests/${mr.iid}/merge`, sha);
  return sha;
}

// ---------------------------------------------------------------------------------------------------------------
// Rebasing

export const REBASE_JOB = 'merge_request_rebase';
export const REBASE_FAILED = 'Rebase failed: Rebase locally, resolve all conflicts, then push the branch.';
const REBASE_BUSY = 'Failed to enqueue the rebase operation, possibly due to a long-lived transaction. Try again later.';

/**
 * The caller may push to the merge request's source branch (the reference's `authorize_push_to_merge_request!`):
 * 403 "Source branch does not exist" without it, 403 "Cannot push to source branch" unless the caller pushes to
 * that branch of the source project, directly or as a collaborator on a fork's merge request (policy.ts).
 */
export async function authorizeSourcePush(deps: ServiceDeps, actor: Actor, mr: MergeRequestRow): Promise<void> {
  const project = mr.source_project_id === null ? undefined : await liveProjectById(deps, mr.source_project_id);
  if (!project || !(await repoFor(deps.config, project).resolveCommit(`refs/heads/${mr.source_branch}`))) throw new ForbiddenError('Source branch does not exist');
  if (!(await canPushSource(deps, actor, mr, project))) throw new ForbiddenError('Cannot push to source branch');
}

/** The caller may push to the source branch of `mr` (in `project`, its source project, when already loaded). */
export async function canPushSource(deps: ServiceDeps, actor: Actor, mr: MergeRequestRow, project?: ProjectRow): Promise<boolean> {
  if (!project) project = mr.source_project_id === null ? undefined : await liveProjectById(deps, mr.source_project_id);
  if (!actor.user || !project) return false;
  const level = await levelIn(deps.db, actor, project);
  const rules = await loadBranchRules(deps.db, project.id);
  if (canProject(actor, 'push_code', project, level)) return canPushBranch(deps.db, rules, mr.source_branch, { userId: actor.user.id, level, admin: actor.admin });
  // Not a writer of the source project: a collaborator through an open merge request from this branch.
  return (await collaborativeBranches(deps, actor, project, { branch: mr.source_branch, rules })).has(mr.source_branch);
}

/** `PUT .../rebase`: marks the rebase in progress and queues it (202); 403 unless the caller may push to the source branch. */
export async function requestRebase(deps: ServiceDeps, scope: MergeRequestScope, mr: MergeRequestRow, skipCi: boolean): Promise<MergeRequestRow> {
  await authorizeSourcePush(deps, scope.actor, mr);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('merge_requests').set({ rebase_in_progress: 1, rebase_jid: String(now), merge_error: null })
      .where('id', '=', mr.id).where('state', '=', 'opened').where('rebase_in_progress', '=', 0).returningAll().executeTakeFirst();
    if (!row) throw new RuleError('conflict', REBASE_BUSY);
    await deps.jobs.enqueue(trx, REBASE_JOB, { merge_request_id: mr.id, user_id: scope.actor.user!.id, skip_ci: skipCi }, { uniqueKey: `${REBASE_JOB}:${mr.id}:${now}` });
    return row;
  });
}

/**
 * The queued rebase: the source branch's own commits (merges left out) replayed one by one onto the target head
 * with `merge-tree` (authors and messages kept, the rebasing user as committer, commits that become empty
 * dropped), the source branch moved by compare-and-swap from the head it was read at, and a new diff version.
 * A conflict or a moved branch leaves the branch as it was and says why in `merge_error`.
 */
export async function runRebase(deps: ServiceDeps, args: { merge_request_id: number; user_id: number }): Promise<void> {
  const mr = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', args.merge_request_id).executeTakeFirst();
  if (!mr) return;
  const finish = (set: { merge_error: string | null } & Partial<Pick<MergeRequestRow, 'sha' | 'rebase_commit_sha' | 'latest_diff_id'>>) =>
    deps.db.updateTable('merge_requests').set({ ...set, rebase_in_progress: 0, rebase_jid: null, updated_at: deps.clock.now() }).where('id', '=', mr.id).execute();
  const [target, source] = await Promise.all([liveProjectById(deps, mr.target_project_id), mr.source_project_id !== null ? liveProjectById(deps, mr.source_project_id) : undefined]);
  if (mr.state !== 'opened' || !target || !source) return void (await finish({ merge_error: null }));
  const user = (await usersByIds(deps, [args.user_id])).get(args.user_id);
  const targetRepo = repoFor(deps.config, target);
  const sourceRepo = repoFor(deps.config, source);
  const forked = target.id !== source.id;
  const sourceHead = await sourceRepo.resolveCommit(`refs/heads/${mr.source_branch}`);
  let targetHead = await targetRepo.resolveCommit(`refs/heads/${mr.target_branch}`);
  if (!sourceHead || !targetHead) return void (await finish({ merge_error: REBASE_FAILED }));
  const scratch = `refs/rebase-onto/${mr.id}`;
  if (forked) targetHead = await sourceRepo.fetchBranchInto(targetRepo.path, mr.target_branch, scratch);
  try {
    let onto = targetHead;
    if (await sourceRepo.isAncestor(targetHead, sourceHead)) return void (await finish({ merge_error: null }));
    const committer = user ? { name: user.name, email: user.email, date: new Date(deps.clock.now()) } : undefined;
    for (const c of await sourceRepo.commitsBetween(targetHead, sourceHead)) {
      const tree = await sourceRepo.applyChangeTree(c, onto, 'cherry-pick');
      if (!tree) return void (await finish({ merge_error: REBASE_FAILED }));
      if (tree === (await sourceRepo.treeOf(onto))) continue;
      const raw = await sourceRepo.rawCommit(c);
      onto = await sourceRepo.commitTree({ tree, parents: [onto], message: raw.message, author: raw.author, committer: committer ?? raw.author });
    }
    try {
      await sourceRepo.updateRef(`refs/heads/${mr.source_branch}`, onto, sourceHead);
    } catch (e) {
      if (e instanceof RefMovedError) return void (await finish({ merge_error: REBASE_FAILED }));
      throw e;
    }
    await afterRefsChanged(deps, source, sourceRepo, [`refs/heads/${mr.source_branch}`]);
    // The merge request follows its source: the head ref, `sha`, and a new version.
    const head = forked ? await targetRepo.fetchBranchInto(sourceRepo.path, mr.source_branch, headRef(mr.iid)) : onto;
    if (!forked) await setRef(targetRepo, headRef(mr.iid), onto);
    const realTarget = (await targetRepo.resolveCommit(`refs/heads/${mr.target_branch}`))!;
    const base = await targetRepo.mergeBase(realTarget, head);
    await deps.db.transaction().execute(async (trx) => {
      const diff = await recordDiffVersion(trx, targetRepo, mr.id, { base, start: realTarget, head }, deps.clock.now());
      await trx.updateTable('merge_requests').set({ sha: head, rebase_commit_sha: head, latest_diff_id: diff, merge_error: null, rebase_in_progress: 0, rebase_jid: null, updated_at: deps.clock.now() })
        .where('id', '=', mr.id).execute();
    });
  } finally {
    if (forked) await sourceRepo.deleteRef(scratch).catch(() => undefined);
  }
}
