import type { Selectable } from 'kysely';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { IssuesTable, LabelsTable, MergeRequestsTable, NotesTable, ProjectsTable, UsersTable } from '../../platform/db/schema.ts';
import type { DomainEvent, Changes } from '../../platform/events.ts';
import { EMPTY_TREE_SHA1, SHA1_ZERO, type CommitInfo, type Repository } from '../../platform/git/index.ts';
import { avatarUrl } from '../../platform/storage/avatars.ts';
import { iso, isoDate, sshUrlToRepo, webUrl } from '../../http/format.ts';
import { repoFor } from '../repository/repository.common.ts';
import { getPage } from '../wikis/wikis.service.ts';

// The bodies the reference POSTs for each event kind (its documented webhook examples and Gitlab::DataBuilder):
// built when the event is handled, from the records as they are then and what the event carried.

type ProjectRow = Selectable<ProjectsTable>;
type UserRow = Selectable<UsersTable>;

/** What one event becomes: the payload, the hook flag it needs, and the `X-Gitlab-Event` name. */
export interface BuiltEvent {
  flag: 'push_events' | 'tag_push_events' | 'issues_events' | 'confidential_issues_events' | 'merge_requests_events'
    | 'note_events' | 'confidential_note_events' | 'wiki_page_events';
  hookName: string;
  payload: Record<string, unknown>;
  /** A branch push: the branch, for the hooks' branch filters. */
  branch?: string;
}

const MAX_PUSH_COMMITS = 20;

function projectWeb(deps: ServiceDeps, p: Pick<ProjectRow, 'full_path'>): string {
  return webUrl(deps.config.externalUrl, p.full_path);
}

/** The reference's Project#hook_attrs. */
export async function projectHookAttrs(deps: ServiceDeps, p: ProjectRow): Promise<Record<string, unknown>> {
  const ns = await deps.db.selectFrom('namespaces').select(['name']).where('id', '=', p.namespace_id).executeTakeFirst();
  const web = projectWeb(deps, p);
  const ssh = sshUrlToRepo(deps.config, p.full_path);
  return {
    id: p.id, name: p.name, description: p.description ?? '', web_url: web,
    avatar_url: avatarUrl(deps.config.externalUrl, 'project', p.id, p.avatar), git_ssh_url: ssh, git_http_url: `${web}.git`,
    namespace: ns?.name ?? '', visibility_level: p.visibility_level, path_with_namespace: p.full_path,
    default_branch: p.default_branch, ci_config_path: null, homepage: web, url: ssh, ssh_url: ssh, http_url: `${web}.git`,
  };
}

/** The deprecated `repository` block: a slice of the project's attributes. */
function repositoryAttrs(project: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, project[k]]));
}
const REPO_KEYS = ['name', 'url', 'description', 'homepage'];

/** The reference's User#hook_attrs: the e-mail only when public. */
export function userHookAttrs(deps: ServiceDeps, u: UserRow): Record<string, unknown> {
  return {
    id: u.id, name: u.name, username: u.username, avatar_url: avatarUrl(deps.config.externalUrl, 'user', u.id, u.avatar),
    email: u.public_email || '[REDACTED]',
  };
}

function userBrief(deps: ServiceDeps, u: UserRow): Record<string, unknown> {
  return { id: u.id, name: u.name, username: u.username, avatar_url: avatarUrl(deps.config.externalUrl, 'user', u.id, u.avatar) };
}

function labelHookAttrs(l: Selectable<LabelsTable>): Record<string, unknown> {
  return {
    id: l.id, title: l.title, color: l.color, project_id: l.project_id, created_at: iso(l.created_at), updated_at: iso(l.updated_at),
    template: false, description: l.description, type: l.project_id !== null ? 'ProjectLabel' : 'GroupLabel', group_id: l.group_id,
  };
}

async function labelsOf(deps: ServiceDeps, targetType: 'Issue' | 'MergeRequest', targetId: number) {
  const rows = await deps.db.selectFrom('label_links').innerJoin('labels', 'labels.id', 'label_links.label_id')
    .selectAll('labels').where('label_links.target_type', '=', targetType).where('label_links.target_id', '=', targetId)
    .orderBy('labels.title').orderBy('labels.id').execute();
  return rows.map(labelHookAttrs);
}

async function usersByIds(deps: ServiceDeps, ids: number[]): Promise<UserRow[]> {
  if (!ids.length) return [];
  const rows = await deps.db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((u): u is UserRow => !!u);
}

function humanDuration(seconds: number): string | null {
  if (!seconds) return null;
  const parts: string[] = [];
  let s = seconds;
  for (const [unit, size] of [['w', 5 * 8 * 3600], ['d', 8 * 3600], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    const n = Math.floor(s / size);
    if (n) parts.push(`${n}${unit}`);
    s -= n * size;
  }
  return parts.join(' ');
}

function commitHookAttrs(web: string, c: CommitInfo, files?: { added: string[]; modified: string[]; removed: string[] }): Record<string, unknown> {
  return {
    id: c.id, message: c.message, title: c.title, timestamp: c.authored_date, url: `${web}/-/commit/${c.id}`,
    author: { name: c.author_name, email: c.author_email }, ...(files ?? {}),
  };
}

function projectRepo(deps: ServiceDeps, p: ProjectRow): Repository {
  return repoFor(deps.config, p);
}

/** The reference's Issue#hook_attrs (IssueBuilder). */
export async function issueHookAttrs(deps: ServiceDeps, project: ProjectRow, issue: Selectable<IssuesTable>): Promise<Record<string, unknown>> {
  const assigneeIds = (await deps.db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).orderBy('user_id').execute()).map((r) => r.user_id);
  const spent = await timeSpent(deps, 'Issue', issue.id);
  return {
    author_id: issue.author_id, closed_at: iso(issue.closed_at), confidential: !!issue.confidential, created_at: iso(issue.created_at),
    description: issue.description, discussion_locked: issue.discussion_locked === null ? null : !!issue.discussion_locked,
    due_date: isoDate(issue.due_date), id: issue.id, iid: issue.iid, last_edited_at: iso(issue.last_edited_at),
    last_edited_by_id: issue.last_edited_by_id, milestone_id: issue.milestone_id, moved_to_id: issue.moved_to_id,
    duplicated_to_id: issue.duplicated_to_id, project_id: issue.project_id, relative_position: issue.relative_position,
    state_id: issue.state === 'closed' ? 2 : 1, time_estimate: issue.time_estimate, title: issue.title, updated_at: iso(issue.updated_at),
    updated_by_id: issue.last_edited_by_id, weight: issue.weight, type: 'Issue',
    url: `${projectWeb(deps, project)}/-/issues/${issue.iid}`, total_time_spent: spent, time_change: 0,
    human_total_time_spent: humanDuration(spent), human_time_change: null, human_time_estimate: humanDuration(issue.time_estimate),
    assignee_ids: assigneeIds, assignee_id: assigneeIds[0] ?? null, labels: await labelsOf(deps, 'Issue', issue.id), state: issue.state,
    severity: 'unknown',
  };
}

async function timeSpent(deps: ServiceDeps, type: 'Issue' | 'MergeRequest', id: number): Promise<number> {
  const row = await deps.db.selectFrom('timelogs').select((eb) => eb.fn.sum<number | string | null>('time_spent').as('total'))
    .where('target_type', '=', type).where('target_id', '=', id).executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** The reference's MergeRequest#hook_attrs (MergeRequestBuilder). */
export async function mergeRequestHookAttrs(deps: ServiceDeps, project: ProjectRow, mr: Selectable<MergeRequestsTable>): Promise<Record<string, unknown>> {
  const assigneeIds = (await deps.db.selectFrom('merge_request_assignees').select('user_id').where('merge_request_id', '=', mr.id).orderBy('created_at').orderBy('user_id').execute()).map((r) => r.user_id);
  const reviewerIds = (await deps.db.selectFrom('merge_request_reviewers').select('user_id').where('merge_request_id', '=', mr.id).orderBy('created_at').orderBy('user_id').execute()).map((r) => r.user_id);
  const source = mr.source_project_id === null ? null
    : mr.source_project_id === project.id ? project
      : await deps.db.selectFrom('projects').selectAll().where('id', '=', mr.source_project_id).executeTakeFirst() ?? null;
  const spent = await timeSpent(deps, 'MergeRequest', mr.id);
  const targetAttrs = await projectHookAttrs(deps, project);
  let lastCommit: Record<string, unknown> | null = null;
  if (mr.sha) {
    const c = await projectRepo(deps, project).getCommit(mr.sha).catch(() => null);
    if (c) lastCommit = commitHookAttrs(projectWeb(deps, project), c);
  }
  const STATE_ID: Record<string, number> = { opened: 1, closed: 2, merged: 3, locked: 4 };
  const attrs: Record<string, unknown> = {
    assignee_id: assigneeIds[0] ?? null, author_id: mr.author_id, created_at: iso(mr.created_at), description: mr.description,
    draft: !!mr.draft, head_pipeline_id: null, id: mr.id, iid: mr.iid, last_edited_at: iso(mr.last_edited_at),
    last_edited_by_id: mr.last_edited_by_id, merge_commit_sha: mr.merge_commit_sha, merge_error: mr.merge_error,
    merge_params: mr.merge_params ? JSON.parse(mr.merge_params) : {}, merge_status: mr.merge_status, merge_user_id: mr.merge_user_id,
    merge_when_pipeline_succeeds: !!mr.merge_when_pipeline_succeeds, milestone_id: mr.milestone_id, source_branch: mr.source_branch,
    source_project_id: mr.source_project_id, state_id: STATE_ID[mr.state] ?? 1, target_branch: mr.target_branch,
    target_project_id: mr.target_project_id, time_estimate: mr.time_estimate, title: mr.title, updated_at: iso(mr.updated_at),
    updated_by_id: mr.last_edited_by_id, url: `${projectWeb(deps, project)}/-/merge_requests/${mr.iid}`,
    source: source ? await projectHookAttrs(deps, source) : null, target: targetAttrs, last_commit: lastCommit,
    work_in_progress: !!mr.draft, total_time_spent: spent, time_change: 0, human_total_time_spent: humanDuration(spent),
    human_time_change: null, human_time_estimate: humanDuration(mr.time_estimate), assignee_ids: assigneeIds, reviewer_ids: reviewerIds,
    labels: await labelsOf(deps, 'MergeRequest', mr.id), state: mr.state, blocking_discussions_resolved: true,
    first_contribution: false, detailed_merge_status: detailedStatus(mr.merge_status),
  };
  return attrs;
}

function detailedStatus(mergeStatus: string): string {
  if (mergeStatus === 'can_be_merged') return 'mergeable';
  if (mergeStatus === 'cannot_be_merged' || mergeStatus === 'cannot_be_merged_recheck') return 'broken_status';
  return 'checking';
}

/** The event's changes as the payload shows them: label and assignee ids become their hook attributes. */
async function issuableChanges(deps: ServiceDeps, changes: Changes | undefined): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (k === 'label_ids') {
      const ids = [...new Set([...(v.previous as number[]), ...(v.current as number[])])];
      const rows = ids.length ? await deps.db.selectFrom('labels').selectAll().where('id', 'in', ids).execute() : [];
      const byId = new Map(rows.map((r) => [r.id, labelHookAttrs(r)]));
      const pick = (list: unknown) => (list as number[]).map((id) => byId.get(id)).filter(Boolean);
      out.labels = { previous: pick(v.previous), current: pick(v.current) };
    } else if (k === 'assignee_ids' || k === 'reviewer_ids') {
      const pick = async (list: unknown) => (await usersByIds(deps, list as number[])).map((u) => userBrief(deps, u));
      out[k === 'assignee_ids' ? 'assignees' : 'reviewers'] = { previous: await pick(v.previous), current: await pick(v.current) };
    } else out[k] = { previous: v.previous, current: v.current };
  }
  return out;
}

async function issuableBlock(deps: ServiceDeps, kind: 'issue' | 'merge_request', project: ProjectRow, actor: UserRow,
  attrs: Record<string, unknown>, action: string, changes: Changes | undefined, extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const projectAttrs = await projectHookAttrs(deps, project);
  const assignees = await usersByIds(deps, attrs.assignee_ids as number[]);
  const confidential = kind === 'issue' && attrs.confidential === true;
  const payload: Record<string, unknown> = {
    object_kind: kind, event_type: confidential ? `confidential_${kind}` : kind, user: userHookAttrs(deps, actor), project: projectAttrs,
    object_attributes: { ...attrs, action, ...extra }, labels: attrs.labels, changes: await issuableChanges(deps, changes),
    repository: repositoryAttrs(projectAttrs, REPO_KEYS),
  };
  if (assignees.length) {
    payload.assignees = assignees.map((u) => userBrief(deps, u));
    if (kind === 'issue') payload.assignee = userBrief(deps, assignees[0]);
  }
  if (kind === 'merge_request') {
    const reviewers = await usersByIds(deps, attrs.reviewer_ids as number[]);
    if (reviewers.length) payload.reviewers = reviewers.map((u) => userBrief(deps, u));
  }
  return payload;
}

async function pushCommits(deps: ServiceDeps, project: ProjectRow, ref: string, before: string, after: string): Promise<{ commits: CommitInfo[]; total: number; repo: Repository }> {
  const repo = projectRepo(deps, project);
  if (after === SHA1_ZERO) return { commits: [], total: 0, repo };
  let ids: string[];
  if (before === SHA1_ZERO) {
    // A new branch: every commit when it is the default branch (the first push), else those the default branch lacks.
    const base = project.default_branch && ref !== `refs/heads/${project.default_branch}` ? await repo.resolveCommit(`refs/heads/${project.default_branch}`) : null;
    ids = base ? await repo.commitsBetween(base, after) : (await repo.history({ ref: after, limit: 10_000 })).map((c) => c.id).reverse();
  } else {
    ids = await repo.commitsBetween(before, after);
  }
  const last = ids.slice(-MAX_PUSH_COMMITS);
  const infos = await repo.getCommits(last);
  return { commits: last.map((id) => infos.get(id)).filter((c): c is CommitInfo => !!c), total: ids.length, repo };
}

async function changedFiles(repo: Repository, c: CommitInfo): Promise<{ added: string[]; modified: string[]; removed: string[] }> {
  const out = { added: [] as string[], modified: [] as string[], removed: [] as string[] };
  const entries = await repo.compareDiff(c.parent_ids[0] ?? EMPTY_TREE_SHA1, c.id).catch(() => []);
  for (const e of entries as Array<{ new_file?: boolean; deleted_file?: boolean; renamed_file?: boolean; old_path: string; new_path: string }>) {
    if (e.new_file) out.added.push(e.new_path);
    else if (e.deleted_file) out.removed.push(e.old_path);
    else if (e.renamed_file) {
      out.removed.push(e.old_path);
      out.added.push(e.new_path);
    } else out.modified.push(e.new_path);
  }
  return out;
}

/** Builds what an event sends, or null when there is nothing to send (its record is gone). */
export async function buildEvent(deps: ServiceDeps, e: DomainEvent): Promise<BuiltEvent | null> {
  const project = await deps.db.selectFrom('projects').selectAll().where('id', '=', e.projectId).executeTakeFirst();
  if (!project || project.pending_delete) return null;
  const actor = await deps.db.selectFrom('users').selectAll().where('id', '=', e.actorId).executeTakeFirst();
  if (!actor) return null;
  switch (e.type) {
    case 'push':
    case 'tag_push': {
      const tag = e.type === 'tag_push';
      const { commits, total, repo } = tag ? { commits: [], total: 0, repo: projectRepo(deps, project) } : await pushCommits(deps, project, e.ref, e.before, e.after);
      const web = projectWeb(deps, project);
      const commitAttrs = [];
      for (const c of commits) commitAttrs.push(commitHookAttrs(web, c, await changedFiles(repo, c)));
      let checkout: string | null = null;
      if (e.after !== SHA1_ZERO) checkout = tag ? await repo.revParse(`${e.after}^{commit}`).catch(() => null) : e.after;
      const projectAttrs = await projectHookAttrs(deps, project);
      const message = tag && e.after !== SHA1_ZERO ? await tagMessage(repo, e.ref) : null;
      return {
        flag: tag ? 'tag_push_events' : 'push_events', hookName: tag ? 'Tag Push Hook' : 'Push Hook',
        branch: tag ? undefined : e.ref.replace(/^refs\/heads\//, ''),
        payload: {
          object_kind: e.type, event_name: e.type, before: e.before, after: e.after, ref: e.ref, checkout_sha: checkout, message,
          user_id: actor.id, user_name: actor.name, user_username: actor.username, user_email: actor.public_email || '[REDACTED]',
          user_avatar: avatarUrl(deps.config.externalUrl, 'user', actor.id, actor.avatar), project_id: project.id, project: projectAttrs,
          commits: commitAttrs, total_commits_count: total, push_options: {},
          repository: repositoryAttrs(projectAttrs, [...REPO_KEYS, 'git_http_url', 'git_ssh_url', 'visibility_level']),
        },
      };
    }
    case 'issue': {
      const issue = await deps.db.selectFrom('issues').selectAll().where('id', '=', e.issueId).executeTakeFirst();
      if (!issue) return null;
      const attrs = await issueHookAttrs(deps, project, issue);
      return {
        flag: issue.confidential ? 'confidential_issues_events' : 'issues_events', hookName: 'Issue Hook',
        payload: await issuableBlock(deps, 'issue', project, actor, attrs, e.action, e.changes),
      };
    }
    case 'merge_request': {
      const mr = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', e.mergeRequestId).executeTakeFirst();
      if (!mr) return null;
      const attrs = await mergeRequestHookAttrs(deps, project, mr);
      return {
        flag: 'merge_requests_events', hookName: 'Merge Request Hook',
        payload: await issuableBlock(deps, 'merge_request', project, actor, attrs, e.action, e.changes, e.oldrev ? { oldrev: e.oldrev } : {}),
      };
    }
    case 'note': {
      const note = await deps.db.selectFrom('notes').selectAll().where('id', '=', e.noteId).executeTakeFirst();
      if (!note) return null;
      return buildNote(deps, project, actor, note, e.action);
    }
    case 'wiki_page': {
      const projectAttrs = await projectHookAttrs(deps, project);
      const web = projectWeb(deps, project);
      let content = '';
      let format = 'markdown';
      if (e.action !== 'delete') {
        const page = await getPage(deps, project, e.slug).catch(() => null);
        if (page) {
          content = page.content?.toString('utf8') ?? '';
          format = page.format;
        }
      }
      const message = `${e.action === 'create' ? 'Create' : e.action === 'update' ? 'Update' : 'Delete'} ${e.title}`;
      return {
        flag: 'wiki_page_events', hookName: 'Wiki Page Hook',
        payload: {
          object_kind: 'wiki_page', user: userHookAttrs(deps, actor), project: projectAttrs,
          wiki: {
            web_url: `${web}/-/wikis/home`, git_ssh_url: sshUrlToRepo(deps.config, `${project.full_path}.wiki`),
            git_http_url: `${web}.wiki.git`, path_with_namespace: `${project.full_path}.wiki`, default_branch: 'main',
          },
          object_attributes: {
            title: e.title, content, format, message, slug: e.slug, url: `${web}/-/wikis/${e.slug}`, action: e.action,
            diff_url: `${web}/-/wikis/${e.slug}/diff${e.sha ? `?version_id=${e.sha}` : ''}`, version_id: e.sha ?? null,
          },
        },
      };
    }
    default:
      // Project moves have no project-hook payload in the reference (only system hooks carry them).
      return null;
  }
}

async function tagMessage(repo: Repository, ref: string): Promise<string | null> {
  const tag = await repo.getTag(ref.replace(/^refs\/tags\//, '')).catch(() => null);
  return (tag as { message?: string | null } | null)?.message || null;
}

async function buildNote(deps: ServiceDeps, project: ProjectRow, actor: UserRow, note: Selectable<NotesTable>, action: 'create' | 'update'): Promise<BuiltEvent | null> {
  const projectAttrs = await projectHookAttrs(deps, project);
  const web = projectWeb(deps, project);
  let confidential = !!note.internal;
  let noteableUrl = web;
  const extra: Record<string, unknown> = {};
  if (note.noteable_type === 'Issue') {
    const issue = await deps.db.selectFrom('issues').selectAll().where('id', '=', note.noteable_id).executeTakeFirst();
    if (!issue) return null;
    confidential ||= !!issue.confidential;
    extra.issue = await issueHookAttrs(deps, project, issue);
    noteableUrl = `${web}/-/issues/${issue.iid}`;
  } else if (note.noteable_type === 'MergeRequest') {
    const mr = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', note.noteable_id).executeTakeFirst();
    if (!mr) return null;
    extra.merge_request = await mergeRequestHookAttrs(deps, project, mr);
    noteableUrl = `${web}/-/merge_requests/${mr.iid}`;
  } else if (note.noteable_type === 'Commit' && note.commit_id) {
    const c = await projectRepo(deps, project).getCommit(note.commit_id).catch(() => null);
    if (c) extra.commit = commitHookAttrs(web, c);
    noteableUrl = `${web}/-/commit/${note.commit_id}`;
  } else if (note.noteable_type === 'Snippet') {
    const s = await deps.db.selectFrom('snippets').selectAll().where('id', '=', note.noteable_id).executeTakeFirst();
    if (s) {
      extra.snippet = {
        id: s.id, title: s.title, description: s.description ?? null, author_id: s.author_id, project_id: s.project_id,
        created_at: iso(s.created_at), updated_at: iso(s.updated_at), file_name: s.file_name ?? null, type: 'ProjectSnippet',
        visibility_level: s.visibility_level, url: `${web}/-/snippets/${s.id}`,
      };
    }
    noteableUrl = `${web}/-/snippets/${note.noteable_id}`;
  }
  return {
    flag: confidential ? 'confidential_note_events' : 'note_events', hookName: confidential ? 'Confidential Note Hook' : 'Note Hook',
    payload: {
      object_kind: 'note', event_type: confidential ? 'confidential_note' : 'note', user: userHookAttrs(deps, actor), project_id: project.id,
      project: projectAttrs,
      object_attributes: {
        attachment: null, author_id: note.author_id, change_position: note.change_position ? JSON.parse(note.change_position) : null,
        commit_id: note.commit_id, created_at: iso(note.created_at), discussion_id: note.discussion_id, id: note.id,
        line_code: note.line_code, note: note.body, noteable_id: note.noteable_id, noteable_type: note.noteable_type,
        original_position: note.original_position ? JSON.parse(note.original_position) : null,
        position: note.position ? JSON.parse(note.position) : null, project_id: note.project_id, resolved_at: iso(note.resolved_at),
        resolved_by_id: note.resolved_by_id, resolved_by_push: null, st_diff: null, system: !!note.system, type: note.type,
        updated_at: iso(note.updated_at), updated_by_id: null, description: note.body, internal: !!note.internal, action,
        url: `${noteableUrl}#note_${note.id}`,
      },
      repository: repositoryAttrs(projectAttrs, REPO_KEYS),
      ...extra,
    },
  };
}
