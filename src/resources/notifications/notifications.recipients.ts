import type { ServiceDeps } from '../../platform/deps.ts';
import { actorOf, type UserRow } from '../../platform/access/actor.ts';
import { issueDenial, noteDenial, projectDenial, snippetDenial, type PolicySnippet } from '../../platform/access/policy.ts';
import { projectAccessLevels, type ProjectRow } from '../../platform/membership.ts';
import { isFeatureEnabled } from '../../platform/features.ts';
import { projectAncestorGroupIds } from '../labels/labels.lookup.ts';
import { usersByIds } from '../users/users.service.ts';
import { effectiveNotificationLevel, getNotificationSetting, GLOBAL, type EventName } from '../notification-settings/notification-settings.service.ts';
import { assigneeIdsOf, type IssueRow } from '../issues/issues.service.ts';
import { userIdsOf, type MergeRequestRow } from '../merge-requests/merge-requests.service.ts';

// Who receives a notification e-mail, as the reference's notification recipients are built
// (NotificationRecipients::Builder and NotificationRecipient#notifiable?):
//
// - candidates, each with a type: participants of the record (`participating`: its author, assignees, reviewers,
//   commenters, users mentioned in it), users mentioned by the action (`mention`), users whose effective level is
//   `watch` (`watch`) or `custom` (`custom`), explicit subscribers of the record and, for new records, of its labels
//   (`subscription`);
// - a candidate is mailed when the access policy lets them read the record, they are not the acting user, and their
//   effective setting (project, then the group chain, then global) suits the type: `disabled` never (explicit
//   subscriptions aside), `mention` for mentions only, `participating` and `watch` always (watchers not for
//   `push_to_merge_request` and `issue_due`), `custom` when the action's event is on or they participate or are
//   mentioned. Who unsubscribed from the record is mailed only when mentioned;
// - one message per user, with the strongest reason (`own_activity`, `assigned`, `review_requested`, `mentioned`,
//   `subscribed`), to their notification e-mail.

export type RecipientType = 'participating' | 'mention' | 'watch' | 'custom' | 'subscription';
export type Reason = 'own_activity' | 'assigned' | 'review_requested' | 'mentioned' | 'subscribed' | null;

export interface Candidate {
  userId: number;
  type: RecipientType;
  reason: Reason;
}

export interface Recipient {
  user: UserRow;
  email: string;
  reason: Reason;
}

/** The record a notification is about, for the read check and the subscriptions. */
export type Subject =
  | { kind: 'Issue'; issue: IssueRow; assigneeIds: number[]; internalNote?: boolean }
  | { kind: 'MergeRequest'; mr: MergeRequestRow; assigneeIds: number[]; reviewerIds: number[]; internalNote?: boolean }
  /** A commit: its message, and the users its author and committer e-mails belong to. */
  | { kind: 'Commit'; sha: string; message: string; authorIds: number[]; internalNote?: boolean }
  | { kind: 'Snippet'; snippet: PolicySnippet & { id: number; description: string | null }; internalNote?: boolean }
  | { kind: 'Project' };

const REASON_ORDER: Reason[] = ['own_activity', 'assigned', 'review_requested', 'mentioned', 'subscribed'];
const priority = (r: Reason) => (r === null ? REASON_ORDER.length : REASON_ORDER.indexOf(r));

/** Events watchers are not told about (the reference's EXCLUDED_WATCHER_EVENTS). */
const EXCLUDED_WATCHER_EVENTS: ReadonlySet<EventName> = new Set(['push_to_merge_request', 'issue_due', 'success_pipeline']);


// ---------------------------------------------------------------------------------------------------------------
// Candidates

const add = (out: Candidate[], ids: Iterable<number | null>, type: RecipientType, reason: Reason) => {
  for (const id of ids) if (id !== null) out.push({ userId: id, type, reason });
};

/**
 * The record's participants: the author, commenters, assignees (and reviewers), and the users its texts mention. A
 * commit's are the users of its author and committer e-mails; a snippet's its author (the reference's
 * `participant :author, :committer, :notes_with_associations`). Who may not read the record, or is not active, is
 * left to `selectRecipients`, which holds every candidate to both.
 */
export async function participantCandidates(deps: ServiceDeps, project: ProjectRow, subject: Subject, out: Candidate[]): Promise<void> {
  if (subject.kind === 'Project') return;
  let ids: Array<number | null>;
  let texts: Array<string | null>;
  let notes = deps.db.selectFrom('notes').select(['author_id', 'body']).where('system', '=', 0).where('internal', '=', 0);
  switch (subject.kind) {
    case 'Issue':
      ids = [subject.issue.author_id, ...subject.assigneeIds];
      texts = [subject.issue.description];
      notes = notes.where('noteable_type', '=', 'Issue').where('noteable_id', '=', subject.issue.id);
      break;
    case 'MergeRequest':
      ids = [subject.mr.author_id, ...subject.assigneeIds, ...subject.reviewerIds];
      texts = [subject.mr.description];
      notes = notes.where('noteable_type', '=', 'MergeRequest').where('noteable_id', '=', subject.mr.id);
      break;
    case 'Commit':
      ids = subject.authorIds;
      texts = [subject.message];
      notes = notes.where('noteable_type', '=', 'Commit').where('project_id', '=', project.id).where('commit_id', '=', subject.sha);
      break;
    case 'Snippet':
      ids = [subject.snippet.author_id];
      texts = [subject.snippet.description];
      notes = notes.where('noteable_type', '=', 'Snippet').where('noteable_id', '=', subject.snippet.id);
      break;
  }
  const rows = await notes.execute();
  add(out, [...ids, ...rows.map((n) => n.author_id)], 'participating', null);
  add(out, await mentionedUserIds(deps, [...texts, ...rows.map((n) => n.body)].join('\n')), 'participating', null);
}

/** Users whose effective level for the project is `watch` or `custom`: candidates of those types. */
export async function watcherCandidates(deps: ServiceDeps, project: ProjectRow, out: Candidate[]): Promise<void> {
  const groupIds = await projectAncestorGroupIds(deps.db, project);
  const rows = await deps.db.selectFrom('notification_settings').select('user_id').distinct().where('level', 'in', ['watch', 'custom'])
    .where((eb) => eb.or([
      eb.and([eb('source_type', '=', 'Project'), eb('source_id', '=', project.id)]),
      ...(groupIds.length ? [eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', groupIds)])] : []),
      eb('source_type', '=', GLOBAL.type),
    ])).execute();
  for (const { user_id } of rows) {
    const setting = await effectiveNotificationLevel(deps, user_id, { projectId: project.id });
    if (setting.level !== 'watch' && setting.level !== 'custom') continue;
    // A global level reaches the projects the user is a member of, as the reference's member settings do.
    if (setting.source.type === 'Global') {
      const access = (await projectAccessLevels(deps.db, user_id, [project])).get(project.id);
      if (!access || (access.project === null && access.group === null && access.effective === 0)) continue;
    }
    out.push({ userId: user_id, type: setting.level, reason: null });
  }
}

/** Explicit subscribers of the record, and for a new one, of its labels (one query). */
export async function subscriberCandidates(deps: ServiceDeps, subject: Subject, withLabels: boolean, out: Candidate[]): Promise<void> {
  if (subject.kind !== 'Issue' && subject.kind !== 'MergeRequest') return;
  const id = subject.kind === 'Issue' ? subject.issue.id : subject.mr.id;
  const subs = await deps.db.selectFrom('subscriptions').select('user_id').distinct().where('subscribed', '=', 1)
    .where((eb) => eb.or([
      eb.and([eb('subscribable_type', '=', subject.kind), eb('subscribable_id', '=', id)]),
      ...(withLabels
        ? [eb.and([eb('subscribable_type', '=', 'Label'), eb('subscribable_id', 'in', eb.selectFrom('label_links').select('label_id')
          .where('target_type', '=', subject.kind).where('target_id', '=', id))])]
        : []),
    ])).execute();
  add(out, subs.map((s) => s.user_id), 'subscription', 'subscribed');
}

/** The assignees (and reviewers) of the record. */
export function assigneeIds(subject: Subject): { assignees: number[]; reviewers: number[] } {
  if (subject.kind === 'Issue') return { assignees: subject.assigneeIds, reviewers: [] };
  if (subject.kind === 'MergeRequest') return { assignees: subject.assigneeIds, reviewers: subject.reviewerIds };
  return { assignees: [], reviewers: [] };
}

export async function issueSubject(deps: ServiceDeps, issue: IssueRow): Promise<Subject> {
  return { kind: 'Issue', issue, assigneeIds: (await assigneeIdsOf(deps.db, [issue.id])).get(issue.id)! };
}

export async function mergeRequestSubject(deps: ServiceDeps, mr: MergeRequestRow): Promise<Subject> {
  const [a, r] = await Promise.all([
    userIdsOf(deps.db, 'merge_request_assignees', [mr.id]),
    userIdsOf(deps.db, 'merge_request_reviewers', [mr.id]),
  ]);
  return { kind: 'MergeRequest', mr, assigneeIds: a.get(mr.id)!, reviewerIds: r.get(mr.id)! };
}

// ---------------------------------------------------------------------------------------------------------------
// Mentions

/** `@name` references outside code: a user's username or a group's full path (`@group/subgroup`). */
const MENTION = /(?:^|[^\w.+\-/@`])@([A-Za-z0-9_][A-Za-z0-9_.\-]*(?:\/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*)/g;
const MAX_MENTIONS = 100;

/** The project's members: its own, those of its group and every ancestor group, and its personal namespace's owner. */
export async function projectMemberIds(deps: ServiceDeps, project: ProjectRow): Promise<number[]> {
  const groupIds = await projectAncestorGroupIds(deps.db, project);
  const [members, ns] = await Promise.all([
    deps.db.selectFrom('members').select('user_id').where((eb) => eb.or([
      eb.and([eb('source_type', '=', 'Project'), eb('source_id', '=', project.id)]),
      ...(groupIds.length ? [eb.and([eb('source_type', '=', 'Namespace'), eb('source_id', 'in', groupIds)])] : []),
    ])).execute(),
    deps.db.selectFrom('namespaces').select('owner_id').where('id', '=', project.namespace_id).executeTakeFirst(),
  ]);
  const ids = new Set(members.map((m) => m.user_id));
  if (ns?.owner_id) ids.add(ns.owner_id);
  return [...ids];
}

/**
 * The users a text mentions: by username, and the members of a mentioned group (unless it turned mentions off).
 * With `by` (the text's project and author), `@all` mentions every member of the project, as the reference's: only
 * when the author is a member themselves, and never while the `disable_all_mention` flag is on.
 */
export async function mentionedUserIds(deps: ServiceDeps, text: string | null, by?: { project: ProjectRow; authorId: number | null }): Promise<number[]> {
  if (!text) return [];
  const plain = text.replace(/```[\s\S]*?```/g, ' ').replace(/`[^`\n]*`/g, ' ');
  const names = new Set<string>();
  for (const m of plain.matchAll(MENTION)) {
    names.add(m[1].replace(/[.\-]+$/, '').toLowerCase());
    if (names.size >= MAX_MENTIONS) break;
  }
  names.delete('');
  const all = names.delete('all');
  const ids = new Set<number>();
  if (all && by && by.authorId !== null && !(await isFeatureEnabled(deps.db, 'disable_all_mention', { type: 'Project', id: by.project.id }))) {
    const members = await projectMemberIds(deps, by.project);
    if (members.includes(by.authorId)) for (const id of members) ids.add(id);
  }
  if (!names.size) return [...ids];
  const list = [...names];
  const [users, groups] = await Promise.all([
    deps.db.selectFrom('users').select('id').where((eb) => eb.fn('lower', ['username']), 'in', list).execute(),
    deps.db.selectFrom('namespaces').select('id').where('kind', '=', 'group').where('full_path_lower', 'in', list)
      .where((eb) => eb.or([eb('mentions_disabled', 'is', null), eb('mentions_disabled', '=', 0)])).execute(),
  ]);
  for (const u of users) ids.add(u.id);
  if (groups.length) {
    const members = await deps.db.selectFrom('members').select('user_id').where('source_type', '=', 'Namespace')
      .where('source_id', 'in', groups.map((g) => g.id)).execute();
    for (const m of members) ids.add(m.user_id);
  }
  return [...ids];
}

// ---------------------------------------------------------------------------------------------------------------
// Filtering

function suits(level: string, events: Record<string, boolean>, type: RecipientType, action: EventName): boolean {
  switch (level) {
    case 'custom': return !!events[action] || type === 'participating' || type === 'mention';
    case 'watch': return !EXCLUDED_WATCHER_EVENTS.has(action);
    case 'participating': return true;
    case 'mention': return type === 'mention';
    default: return false;
  }
}

async function mayRead(deps: ServiceDeps, user: UserRow, project: ProjectRow, subject: Subject): Promise<boolean> {
  const level = (await projectAccessLevels(deps.db, user.id, [project], deps.clock.now())).get(project.id)?.effective ?? 0;
  const actor = actorOf(user);
  if (subject.kind === 'Issue') {
    if (issueDenial(actor, 'read_issue', project, level, { ...subject.issue, assigneeIds: subject.assigneeIds })) return false;
  } else if (subject.kind === 'MergeRequest') {
    if (projectDenial(actor, 'read_merge_request', project, level)) return false;
  } else if (subject.kind === 'Commit') {
    if (projectDenial(actor, 'download_code', project, level)) return false;
  } else if (subject.kind === 'Snippet') {
    if (snippetDenial(actor, 'read_snippet', subject.snippet, project, level)) return false;
  } else if (projectDenial(actor, 'read_project', project, level)) return false;
  if (subject.kind !== 'Project' && subject.internalNote && noteDenial(actor, 'read_internal', project, level, { locked: false })) return false;
  return true;
}

/** Whether the user turned the record's notifications off (an explicit unsubscription). */
async function unsubscribed(deps: ServiceDeps, userId: number, subject: Subject): Promise<boolean> {
  if (subject.kind !== 'Issue' && subject.kind !== 'MergeRequest') return false;
  const id = subject.kind === 'Issue' ? subject.issue.id : subject.mr.id;
  const row = await deps.db.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', subject.kind)
    .where('subscribable_id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return !!row && !row.subscribed;
}

/** The candidates who are mailed, one per user with their strongest reason, in user id order. */
export async function selectRecipients(deps: ServiceDeps, o: {
  project: ProjectRow; subject: Subject; action: EventName; actingUserId: number | null; candidates: Candidate[];
  /** The candidates' users when the caller has read them already. */
  users?: Map<number, UserRow>;
}): Promise<Recipient[]> {
  const byUser = new Map<number, Candidate[]>();
  for (const c of o.candidates) {
    if (c.userId === o.actingUserId) continue;
    byUser.set(c.userId, [...(byUser.get(c.userId) ?? []), c]);
  }
  const users = o.users ?? await usersByIds(deps, [...byUser.keys()]);
  const out: Recipient[] = [];
  for (const [userId, entries] of [...byUser].sort((a, b) => a[0] - b[0])) {
    const user = users.get(userId);
    if (!user || user.state !== 'active' || user.user_type !== 'human') continue;
    if (!(await mayRead(deps, user, o.project, o.subject))) continue;
    const setting = await effectiveNotificationLevel(deps, userId, { projectId: o.project.id });
    const off = await unsubscribed(deps, userId, o.subject);
    const passing = entries.filter((c) => {
      if (c.type === 'subscription') return !off;
      if (!suits(setting.level, setting.events, c.type, o.action)) return false;
      return c.type === 'mention' || !off;
    });
    if (!passing.length) continue;
    const reason = passing.map((c) => c.reason).sort((a, b) => priority(a) - priority(b))[0];
    const email = (await getNotificationSetting(deps, userId, GLOBAL)).notificationEmail ?? user.email;
    out.push({ user, email, reason });
  }
  return out;
}
