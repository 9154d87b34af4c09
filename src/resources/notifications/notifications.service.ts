import type { ServiceDeps } from '../../platform/deps.ts';
import type { Selectable } from 'kysely';
import type { Db } from '../../platform/db/index.ts';
import type { NotesTable } from '../../platform/db/schema.ts';
import type { UserRow } from '../../platform/access/actor.ts';
import type { DomainEvent } from '../../platform/events.ts';
import type { MailMessage } from '../../platform/mail.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { liveProjectById } from '../../platform/project-rows.ts';
import { serverSecret, signToken, verifyToken } from '../../platform/signed-links.ts';
import { projectAncestorGroupIds } from '../labels/labels.lookup.ts';
import { repoFor } from '../repository/repository.common.ts';
import { userIdsByEmails, usersByIds } from '../users/users.service.ts';
import { setSubscription as setIssueSubscription, type IssueRow } from '../issues/issues.service.ts';
import { setSubscription as setMergeRequestSubscription, type MergeRequestRow } from '../merge-requests/merge-requests.service.ts';
import type { EventName } from '../notification-settings/notification-settings.service.ts';
import {
  assigneeIds, issueSubject, mentionedUserIds, mergeRequestSubject, projectMemberIds, participantCandidates, selectRecipients, subscriberCandidates,
  watcherCandidates,
  type Candidate, type Subject,
} from './notifications.recipients.ts';
import { recordUrl, render, type Block, type Draft, type IssuableThread, type Thread } from './notifications.messages.ts';

// What each domain event means in e-mail (the reference's NotificationService): the event name of the notification
// settings, who receives it, and what it says. Events without an e-mail (wiki pages, pushes to branches without a
// merge request, approvals) give none. Pipeline events (`failed_pipeline`, `fixed_pipeline`, `success_pipeline`,
// `merge_when_pipeline_succeeds`) and `new_epic` have no source in Bellows and are never sent.

const UNSUBSCRIBE = 'unsubscribe';
const SECRET = 'notification_links';
/** Commits a push e-mail lists. */
const LISTED_COMMITS = 100;

type Loaded =
  | { kind: 'Issue'; project: ProjectRow; row: IssueRow; subject: Subject; thread: IssuableThread }
  | { kind: 'MergeRequest'; project: ProjectRow; row: MergeRequestRow; subject: Subject; thread: IssuableThread };

async function loadIssue(deps: ServiceDeps, issueId: number): Promise<Loaded | null> {
  const row = await deps.db.selectFrom('issues').selectAll().where('id', '=', issueId).executeTakeFirst();
  const project = row && (await liveProjectById(deps, row.project_id));
  if (!row || !project) return null;
  return { kind: 'Issue', project, row, subject: await issueSubject(deps, row), thread: { kind: 'Issue', id: row.id, iid: row.iid, state: row.state, title: row.title } };
}

async function loadMergeRequest(deps: ServiceDeps, id: number): Promise<Loaded | null> {
  const row = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
  const project = row && (await liveProjectById(deps, row.target_project_id));
  if (!row || !project) return null;
  return { kind: 'MergeRequest', project, row, subject: await mergeRequestSubject(deps, row), thread: { kind: 'MergeRequest', id: row.id, iid: row.iid, state: row.state, title: row.title } };
}

const names = (users: Map<number, UserRow>, ids: number[]) => ids.map((id) => users.get(id)?.name).filter(Boolean).join(', ');

/** The subject line of a record's thread, the record named by its reference (`#iid`, `!iid`, short SHA, `$id`). */
function threadSubject(t: Thread): string {
  switch (t.kind) {
    case 'Issue': return `${t.title} (#${t.iid})`;
    case 'MergeRequest': return `${t.title} (!${t.iid})`;
    case 'Commit': return `${t.title} (${t.id.slice(0, 8)})`;
    case 'Snippet': return `${t.title} ($${t.id})`;
  }
}

/**
 * Recipients of an action on an issue or merge request, as the reference's default builder gathers them:
 * participants, watchers and custom levels, the previous and new assignees of a reassignment (reviewers of a reviewer
 * change, `previousAssignees` then being the previous reviewers), subscribers, and for a
 * new record the users its description mentions, its assignees and the subscribers of its labels.
 */
async function issuableCandidates(deps: ServiceDeps, l: Loaded, action: EventName, previousAssignees: number[] = []): Promise<Candidate[]> {
  const out: Candidate[] = [];
  await participantCandidates(deps, l.project, l.subject, out);
  await watcherCandidates(deps, l.project, out);
  const { assignees, reviewers } = assigneeIds(l.subject);
  if (action === 'reassign_issue' || action === 'reassign_merge_request') {
    for (const id of previousAssignees) out.push({ userId: id, type: 'mention', reason: null });
    for (const id of assignees) out.push({ userId: id, type: 'mention', reason: 'assigned' });
  }
  // A reviewer change is a mention of the previous and the new reviewers, as the reference's builder has it.
  if (action === 'change_reviewer_merge_request') {
    for (const id of previousAssignees) out.push({ userId: id, type: 'mention', reason: null });
    for (const id of reviewers) out.push({ userId: id, type: 'mention', reason: 'review_requested' });
  }
  const isNew = action === 'new_issue' || action === 'new_merge_request';
  await subscriberCandidates(deps, l.subject, isNew, out);
  if (isNew) {
    for (const id of await mentionedUserIds(deps, l.row.description, { project: l.project, authorId: l.row.author_id })) out.push({ userId: id, type: 'mention', reason: 'mentioned' });
    for (const id of assignees) out.push({ userId: id, type: 'participating', reason: 'assigned' });
  }
  return out;
}

/** The users a draft names: the record's author, assignees and reviewers, and the previous ones of a change. */
function namedUserIds(l: Loaded, o: { previousAssignees?: number[] }): number[] {
  const { assignees, reviewers } = assigneeIds(l.subject);
  return [...assignees, ...reviewers, ...(o.previousAssignees ?? []), ...(l.row.author_id ? [l.row.author_id] : [])];
}

async function draftsFor(deps: ServiceDeps, l: Loaded, action: EventName, sender: UserRow | null, users: Map<number, UserRow>, o: { previousAssignees?: number[]; oldrev?: string } = {}): Promise<Draft[]> {
  const url = recordUrl(deps.config, l.project, l.thread);
  const isIssue = l.kind === 'Issue';
  const ref = isIssue ? `Issue #${l.thread.iid}` : `Merge request !${l.thread.iid}`;
  const who = sender?.name ?? 'Bellows';
  const { assignees, reviewers } = assigneeIds(l.subject);
  const blocks: Block[] = [];
  let opens = false;
  switch (action) {
    case 'new_issue':
    case 'new_merge_request': {
      opens = true;
      blocks.push({ text: `${who} created ${isIssue ? 'an issue' : 'a merge request'}`, href: url });
      if (!isIssue) {
        const mr = l.row as MergeRequestRow;
        blocks.push({ text: `Branches: ${mr.source_branch} to ${mr.target_branch}` });
      }
      blocks.push({ text: `Author: ${names(users, l.row.author_id ? [l.row.author_id] : []) || 'unknown'}` });
      if (assignees.length) blocks.push({ text: `Assignee${assignees.length > 1 ? 's' : ''}: ${names(users, assignees)}` });
      if (reviewers.length) blocks.push({ text: `Reviewer${reviewers.length > 1 ? 's' : ''}: ${names(users, reviewers)}` });
      if (l.row.description) blocks.push({ pre: l.row.description });
      break;
    }
    case 'close_issue':
    case 'close_merge_request':
      blocks.push({ text: `${ref} was closed by ${who}`, href: url });
      break;
    case 'reopen_issue':
    case 'reopen_merge_request':
      blocks.push({ text: `${ref} was reopened by ${who}`, href: url });
      break;
    case 'merge_merge_request':
      blocks.push({ text: `${ref} was merged by ${who}`, href: url });
      break;
    case 'reassign_issue':
    case 'reassign_merge_request': {
      const before = names(users, o.previousAssignees ?? []);
      const after = names(users, assignees);
      blocks.push({ text: after ? (before ? `Assignee changed from ${before} to ${after}` : `Assignee changed to ${after}`) : 'All assignees were removed.' });
      blocks.push({ text: ref, href: url });
      break;
    }
    case 'change_reviewer_merge_request': {
      const before = names(users, o.previousAssignees ?? []);
      const after = names(users, reviewers);
      blocks.push({ text: after ? (before ? `Reviewer changed from ${before} to ${after}` : `Reviewer changed to ${after}`) : 'All reviewers were removed.' });
      blocks.push({ text: `${who} changed the reviewers of merge request !${l.thread.iid}`, href: url });
      break;
    }
    case 'push_to_merge_request': {
      const mr = l.row as MergeRequestRow;
      blocks.push({ text: `${who} pushed new commits to merge request !${mr.iid}`, href: url });
      if (o.oldrev && mr.sha && !o.oldrev.startsWith('-') && !mr.sha.startsWith('-')) {
        const repo = repoFor(deps.config, l.project);
        const commits = await repo.log({ ref: `${o.oldrev}..${mr.sha}`, limit: LISTED_COMMITS }).catch(() => []);
        if (commits.length) blocks.push({ pre: commits.map((c) => `* ${c.short_id} - ${c.title}`).join('\n') });
      }
      break;
    }
    case 'issue_due': {
      const due = (l.row as IssueRow).due_date;
      blocks.push({ text: `${ref} is due on ${due === null ? 'an unknown date' : new Date(due).toISOString().slice(0, 10)}`, href: url });
      break;
    }
    default:
      return [];
  }
  return [{ project: l.project, thread: l.thread, event: action, sender, subject: threadSubject(l.thread), opens, blocks }];
}

/**
 * Messages for one recipient list and one draft, each with the recipient's own unsubscribe link (`users`: the
 * candidates' users, when read already).
 */
async function messages(deps: ServiceDeps, draft: Draft, subject: Subject, actingUserId: number | null, candidates: Candidate[], users?: Map<number, UserRow>): Promise<MailMessage[]> {
  const recipients = await selectRecipients(deps, { project: draft.project, subject, action: draft.event, actingUserId, candidates, users });
  if (!recipients.length) return [];
  // Only issues and merge requests have subscriptions to leave.
  const thread = draft.thread && (draft.thread.kind === 'Issue' || draft.thread.kind === 'MergeRequest') ? draft.thread : null;
  const secret = thread ? await serverSecret(deps.db, SECRET, deps.clock.now()) : null;
  return recipients.map((r) => render(deps.config, draft, r, thread && secret
    ? `${deps.config.externalUrl}/-/sent_notifications/${signToken(secret, UNSUBSCRIBE, { u: r.user.id, t: thread.kind, i: thread.id })}/unsubscribe`
    : null));
}

/**
 * The users a message needs (the candidates and those its text names) and its sender, `actorId` (null: nobody), read
 * together.
 */
async function usersAndSender(deps: ServiceDeps, actorId: number | null, ids: number[]): Promise<{ users: Map<number, UserRow>; sender: UserRow | null }> {
  const users = await usersByIds(deps, [...new Set([...(actorId === null ? [] : [actorId]), ...ids])]);
  return { users, sender: actorId === null ? null : users.get(actorId) ?? null };
}

/**
 * The messages of one action on an issue or merge request, by `actorId` (null: by nobody). Most actions have no one
 * to tell but the actor, who is not told: that is known from the candidates alone, before any user is read. The
 * users the messages need (the sender, the candidates, those the text names) are then read together.
 */
async function issuableMessages(deps: ServiceDeps, l: Loaded, action: EventName, actorId: number | null, o: { previousAssignees?: number[]; oldrev?: string; notifyActor?: boolean } = {}): Promise<MailMessage[]> {
  const candidates = await issuableCandidates(deps, l, action, o.previousAssignees);
  const acting = o.notifyActor ? null : actorId;
  if (!candidates.some((c) => c.userId !== acting)) return [];
  const { users, sender } = await usersAndSender(deps, actorId, [...candidates.map((c) => c.userId), ...namedUserIds(l, o)]);
  const out: MailMessage[] = [];
  for (const draft of await draftsFor(deps, l, action, sender, users, o)) out.push(...(await messages(deps, draft, l.subject, acting, candidates, users)));
  return out;
}

function previousIds(changes: Record<string, { previous: unknown; current: unknown }> | undefined, name: string): number[] | null {
  const c = changes?.[name];
  if (!c || !Array.isArray(c.previous)) return null;
  return c.previous.map((v) => (typeof v === 'number' ? v : Number((v as { id?: unknown })?.id))).filter((n) => Number.isInteger(n));
}

/** The e-mails one domain event gives, one per recipient. */
export async function notificationsFor(deps: ServiceDeps, event: DomainEvent): Promise<MailMessage[]> {
  const actorId = 'actorId' in event ? event.actorId : null;
  switch (event.type) {
    case 'issue': {
      const l = await loadIssue(deps, event.issueId);
      if (!l) return [];
      const out: MailMessage[] = [];
      if (event.action === 'open') out.push(...(await issuableMessages(deps, l, 'new_issue', actorId)));
      if (event.action === 'close') out.push(...(await issuableMessages(deps, l, 'close_issue', actorId)));
      if (event.action === 'reopen') out.push(...(await issuableMessages(deps, l, 'reopen_issue', actorId)));
      const previous = event.action !== 'open' ? previousIds(event.changes, 'assignee_ids') : null;
      if (previous) out.push(...(await issuableMessages(deps, l, 'reassign_issue', actorId, { previousAssignees: previous })));
      return out;
    }
    case 'merge_request': {
      const l = await loadMergeRequest(deps, event.mergeRequestId);
      if (!l) return [];
      const out: MailMessage[] = [];
      const single: Partial<Record<typeof event.action, EventName>> = {
        open: 'new_merge_request', close: 'close_merge_request', reopen: 'reopen_merge_request', merge: 'merge_merge_request',
      };
      const name = single[event.action];
      if (name) out.push(...(await issuableMessages(deps, l, name, actorId)));
      if (event.action === 'update' && event.oldrev) out.push(...(await issuableMessages(deps, l, 'push_to_merge_request', actorId, { oldrev: event.oldrev })));
      const previous = event.action !== 'open' ? previousIds(event.changes, 'assignee_ids') : null;
      if (previous) out.push(...(await issuableMessages(deps, l, 'reassign_merge_request', actorId, { previousAssignees: previous })));
      const previousReviewers = event.action !== 'open' ? previousIds(event.changes, 'reviewer_ids') : null;
      if (previousReviewers) out.push(...(await issuableMessages(deps, l, 'change_reviewer_merge_request', actorId, { previousAssignees: previousReviewers })));
      return out;
    }
    case 'note':
      return event.action === 'create' ? noteMessages(deps, event.noteId, actorId) : [];
    case 'project':
      return movedProjectMessages(deps, event.projectId, event.oldPathWithNamespace);
    default:
      return [];
  }
}

/** What a comment is on: its project, the record as a recipient subject, and the record's thread. */
async function loadNoteable(deps: ServiceDeps, note: Selectable<NotesTable>): Promise<{ project: ProjectRow; subject: Subject; thread: Thread } | null> {
  switch (note.noteable_type) {
    case 'Issue': return loadIssue(deps, note.noteable_id);
    case 'MergeRequest': return loadMergeRequest(deps, note.noteable_id);
    case 'Commit': {
      const project = note.project_id === null ? null : await liveProjectById(deps, note.project_id);
      if (!project || !note.commit_id || !/^[0-9a-f]{7,64}$/.test(note.commit_id)) return null;
      const commit = await repoFor(deps.config, project).getCommit(note.commit_id).catch(() => null);
      if (!commit) return null;
      const authorIds = await userIdsByEmails(deps, [commit.author_email, commit.committer_email]);
      return { project, subject: { kind: 'Commit', sha: commit.id, message: commit.message, authorIds }, thread: { kind: 'Commit', id: commit.id, title: commit.title } };
    }
    case 'Snippet': {
      const snippet = await deps.db.selectFrom('snippets').selectAll().where('id', '=', note.noteable_id).executeTakeFirst();
      const project = snippet?.project_id ? await liveProjectById(deps, snippet.project_id) : null;
      if (!snippet || !project) return null;
      return { project, subject: { kind: 'Snippet', snippet }, thread: { kind: 'Snippet', id: snippet.id, title: snippet.title } };
    }
    default:
      return null;
  }
}

/**
 * A comment (the reference's new_note builder): the noteable's participants (for a commit, the users of its author
 * and committer e-mails; for a snippet, its author; the commenters of either), the users it mentions, watchers and
 * custom levels with `new_note` on, and subscribers of an issue or merge request.
 */
async function noteMessages(deps: ServiceDeps, noteId: number, actorId: number | null): Promise<MailMessage[]> {
  const note = await deps.db.selectFrom('notes').selectAll().where('id', '=', noteId).executeTakeFirst();
  if (!note || note.system) return [];
  const l = await loadNoteable(deps, note);
  if (!l) return [];
  const subject = { ...l.subject, internalNote: !!note.internal } as Subject;
  const out: Candidate[] = [];
  await participantCandidates(deps, l.project, l.subject, out);
  for (const id of await mentionedUserIds(deps, note.body, { project: l.project, authorId: note.author_id })) out.push({ userId: id, type: 'mention', reason: 'mentioned' });
  await watcherCandidates(deps, l.project, out);
  await subscriberCandidates(deps, l.subject, false, out);
  if (!out.some((c) => c.userId !== note.author_id)) return [];
  const { users, sender } = await usersAndSender(deps, actorId, out.map((c) => c.userId));
  const earlier = await deps.db.selectFrom('notes').select('id').where('discussion_id', '=', note.discussion_id).where('id', '<', note.id).orderBy('id').execute();
  const url = `${recordUrl(deps.config, l.project, l.thread)}#note_${note.id}`;
  const draft: Draft = {
    project: l.project, thread: l.thread, event: 'new_note', sender, subject: threadSubject(l.thread), opens: false,
    note: { id: note.id, earlier: earlier.map((n) => n.id) },
    blocks: [{ pre: note.body }, { text: 'View it on Bellows', href: url }],
  };
  return messages(deps, draft, subject, note.author_id, out, users);
}

/** A project moved (transfer or path change): its members, by their level for `moved_project`. */
async function movedProjectMessages(deps: ServiceDeps, projectId: number, oldPath: string): Promise<MailMessage[]> {
  const project = await liveProjectById(deps, projectId);
  if (!project) return [];
  const candidates: Candidate[] = (await projectMemberIds(deps, project)).map((userId) => ({ userId, type: 'custom', reason: null }));
  const url = `${deps.config.externalUrl}/${project.full_path}`;
  const draft: Draft = {
    project, thread: null, event: 'moved_project', sender: null, subject: 'Project was moved', opens: true,
    blocks: [
      { text: `Project ${oldPath} was moved to another location` },
      { text: `The project is now located under ${project.full_path}`, href: url },
      { text: 'To update the remote url in your local repository run:' },
      { pre: `git remote set-url origin ${url}.git` },
    ],
  };
  return messages(deps, draft, { kind: 'Project' }, null, candidates);
}

/** Open issues due on the day after `at` (UTC), each to its participants, the author included. */
export async function dueIssueMessages(deps: ServiceDeps, at: number): Promise<MailMessage[]> {
  const tomorrow = Math.floor(at / 86_400_000) * 86_400_000 + 86_400_000;
  const rows = await deps.db.selectFrom('issues').select('id').where('state', '=', 'opened')
    .where('due_date', '>=', tomorrow).where('due_date', '<', tomorrow + 86_400_000).orderBy('id').execute();
  const out: MailMessage[] = [];
  for (const { id } of rows) {
    const l = await loadIssue(deps, id);
    if (!l) continue;
    out.push(...(await issuableMessages(deps, l, 'issue_due', l.row.author_id, { notifyActor: true })));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Unsubscribing through the link of an e-mail

/** Follows an unsubscribe link: the user stops being subscribed to the record. Null when the link is not valid. */
export async function unsubscribeByToken(deps: ServiceDeps, token: string): Promise<{ kind: 'Issue' | 'MergeRequest'; title: string } | null> {
  const value = verifyToken(await serverSecret(deps.db, SECRET, deps.clock.now()), UNSUBSCRIBE, token) as { u?: unknown; t?: unknown; i?: unknown } | null;
  if (!value || !Number.isInteger(value.u) || !Number.isInteger(value.i) || (value.t !== 'Issue' && value.t !== 'MergeRequest')) return null;
  const userId = value.u as number;
  const id = value.i as number;
  if (value.t === 'Issue') {
    const issue = await deps.db.selectFrom('issues').selectAll().where('id', '=', id).executeTakeFirst();
    if (!issue) return null;
    await setIssueSubscription(deps, userId, issue, false);
    return { kind: 'Issue', title: issue.title };
  }
  const mr = await deps.db.selectFrom('merge_requests').selectAll().where('id', '=', id).executeTakeFirst();
  if (!mr) return null;
  await setMergeRequestSubscription(deps, userId, mr, false);
  return { kind: 'MergeRequest', title: mr.title };
}

/** Queues one delivery job per message, all in one transaction. */
export async function queueDeliveries(deps: ServiceDeps, trx: Db, list: MailMessage[]): Promise<void> {
  for (const m of list) await deps.jobs.enqueue(trx, DELIVER, m);
}

export const DELIVER = 'notifications.deliver';
