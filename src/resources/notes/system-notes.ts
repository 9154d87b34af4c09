import type { Db } from '../../platform/db/index.ts';
import type { IssueChange } from '../issues/issues.service.ts';
import type { MergeRequestChange } from '../merge-requests/merge-requests.service.ts';
import { writeSystemNote, type Noteable } from './notes.service.ts';

// The notes the server writes when an issue changes, in the reference's words (SystemNotes::IssuablesService), by
// the user who changed it and inside the change's transaction. A new issue gets none: what it was created with is
// in its resource events.

/** "a", "a and b", "a, b, and c", as Rails' to_sentence joins. */
export function sentence(items: string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

const plural = (n: number, word: string) => (n === 1 ? word : `${word}s`);

/** "July 1, 2026", as the reference writes due dates in notes. */
function longDate(ms: number): string {
  return new Date(ms).toLocaleDateString('en-US', { year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' });
}

/** What issues and merge requests change alike: the notes of these, in the order the reference writes them. */
interface CommonChange {
  before: { title: string; description: string | null; milestone_id: number | null };
  after: { title: string; description: string | null; milestone_id: number | null };
  addedLabelIds: number[];
  removedLabelIds: number[];
  addedAssigneeIds: number[];
  removedAssigneeIds: number[];
}

const usernames = async (trx: Db, ids: number[]) =>
  new Map((await trx.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute()).map((u) => [u.id, `@${u.username}`]));

async function commonBodies(trx: Db, c: CommonChange): Promise<string[]> {
  const { before, after } = c;
  const out: string[] = [];
  if (before.title !== after.title) out.push(`changed title from **{-${before.title}-}** to **{+${after.title}+}**`);
  if ((before.description ?? '') !== (after.description ?? '')) out.push('changed the description');
  if (c.addedLabelIds.length || c.removedLabelIds.length) {
    const refs = (ids: number[]) => ids.map((id) => `~${id}`).join(' ');
    const parts: string[] = [];
    if (c.addedLabelIds.length) parts.push(`added ${refs(c.addedLabelIds)} ${plural(c.addedLabelIds.length, 'label')}`);
    if (c.removedLabelIds.length) parts.push(`removed ${refs(c.removedLabelIds)} ${plural(c.removedLabelIds.length, 'label')}`);
    out.push(parts.join(' and '));
  }
  if (before.milestone_id !== after.milestone_id) {
    const m = after.milestone_id === null ? undefined
      : await trx.selectFrom('milestones').select(['iid', 'title', 'project_id']).where('id', '=', after.milestone_id).executeTakeFirst();
    out.push(m ? `changed milestone to ${m.project_id !== null ? `%${m.iid}` : `%"${m.title}"`}` : 'removed milestone');
  }
  if (c.addedAssigneeIds.length || c.removedAssigneeIds.length) {
    const ids = [...c.addedAssigneeIds, ...c.removedAssigneeIds];
    const names = await usernames(trx, ids);
    const who = (list: number[]) => sentence(list.map((id) => names.get(id) ?? '@ghost'));
    const parts: string[] = [];
    if (c.addedAssigneeIds.length) parts.push(`assigned to ${who(c.addedAssigneeIds)}`);
    if (c.removedAssigneeIds.length) parts.push(`unassigned ${who(c.removedAssigneeIds)}`);
    out.push(parts.join(' and '));
  }
  return out;
}

/** The system notes an issue change calls for, in the order the reference writes them. */
async function bodiesFor(trx: Db, c: IssueChange): Promise<string[]> {
  const before = c.before!;
  const after = c.issue;
  const out = await commonBodies(trx, { ...c, before, after });
  if (before.iteration_id !== after.iteration_id) {
    out.push(after.iteration_id === null ? 'removed iteration' : `changed iteration to *iteration:${after.iteration_id}`);
  }
  if (before.due_date !== after.due_date) out.push(after.due_date === null ? 'removed due date' : `changed due date to ${longDate(after.due_date)}`);
  if (before.confidential !== after.confidential) out.push(after.confidential ? 'made the issue confidential' : 'made the issue visible to everyone');
  if (!!before.discussion_locked !== !!after.discussion_locked) out.push(after.discussion_locked ? 'locked this issue' : 'unlocked this issue');
  if (before.state !== after.state) {
    out.push(after.state === 'closed' ? (c.viaMergeRequest ? `closed via merge request !${c.viaMergeRequest.iid}` : 'closed') : 'reopened');
  }
  return out;
}

/** Writes the system notes of an issue change (none for a new issue). */
export async function writeIssueSystemNotes(trx: Db, c: IssueChange): Promise<void> {
  if (!c.before) return;
  const noteable: Noteable = { type: 'Issue', id: c.issue.id, iid: c.issue.iid, projectId: c.issue.project_id, locked: !!c.issue.discussion_locked };
  for (const body of await bodiesFor(trx, c)) await writeSystemNote(trx, noteable, c.actor.user?.id ?? null, body, c.at);
}

interface ProjectRef { id: number; path: string; full_path: string; namespace_id: number }

/** An issue's reference as written in a note of another project: the project's path in the same namespace, else its full path. */
function issueReference(issue: { iid: number }, of: ProjectRef, from: ProjectRef): string {
  if (of.id === from.id) return `#${issue.iid}`;
  return `${of.namespace_id === from.namespace_id ? of.path : of.full_path}#${issue.iid}`;
}

/**
 * The notes of a move, in the reference's words (`noteable_moved`): "moved from <reference>" on the new issue, then
 * "moved to <reference>" on the old one, each reference written as seen from the note's project.
 */
export async function writeMovedNotes(
  trx: Db, moved: { old: IssueChange['issue']; new: IssueChange['issue'] }, projects: { old: ProjectRef; new: ProjectRef }, authorId: number | null, at: number,
): Promise<void> {
  const noteable = (i: IssueChange['issue']): Noteable => ({ type: 'Issue', id: i.id, iid: i.iid, projectId: i.project_id, locked: !!i.discussion_locked });
  await writeSystemNote(trx, noteable(moved.new), authorId, `moved from ${issueReference(moved.old, projects.old, projects.new)}`, at);
  await writeSystemNote(trx, noteable(moved.old), authorId, `moved to ${issueReference(moved.new, projects.new, projects.old)}`, at);
}

/**
 * Writes the system notes of a merge request change, in the reference's words: what issues share, then the
 * reviewers, the target branch, draft or ready, the lock and the state.
 */
export async function writeMergeRequestSystemNotes(trx: Db, c: MergeRequestChange): Promise<void> {
  if (!c.before) return;
  const before = c.before;
  const after = c.mr;
  const out = await commonBodies(trx, { ...c, before, after });
  if (c.addedReviewerIds.length || c.removedReviewerIds.length) {
    const names = await usernames(trx, [...c.addedReviewerIds, ...c.removedReviewerIds]);
    const who = (list: number[]) => sentence(list.map((id) => names.get(id) ?? '@ghost'));
    const parts: string[] = [];
    if (c.addedReviewerIds.length) parts.push(`requested review from ${who(c.addedReviewerIds)}`);
    if (c.removedReviewerIds.length) parts.push(`removed review request for ${who(c.removedReviewerIds)}`);
    out.push(parts.join(' and '));
  }
  if (before.target_branch !== after.target_branch) out.push(`changed target branch from \`${before.target_branch}\` to \`${after.target_branch}\``);
  if (before.draft !== after.draft) out.push(after.draft ? 'marked this merge request as **draft**' : 'marked this merge request as **ready**');
  if (!!before.discussion_locked !== !!after.discussion_locked) out.push(after.discussion_locked ? 'locked this merge request' : 'unlocked this merge request');
  if (before.state !== after.state) out.push(after.state === 'closed' ? 'closed' : after.state === 'merged' ? 'merged' : 'reopened');
  const noteable = mergeRequestNoteable(after);
  for (const body of out) await writeSystemNote(trx, noteable, c.actor.user?.id ?? null, body, c.at);
}

export const mergeRequestNoteable = (mr: MergeRequestChange['mr']): Noteable =>
  ({ type: 'MergeRequest', id: mr.id, iid: mr.iid, projectId: mr.target_project_id, locked: !!mr.discussion_locked });

/**
 * The note of a push to a merge request's source branch (the reference's `add_commits`): "added N commits", the
 * new commits listed newest first, and the link comparing with the previous version.
 */
export function addedCommitsBody(commits: Array<{ short_id: string; title: string }>, compareUrl: string | null, total = commits.length): string {
  const n = total;
  const escape = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  const parts = [`added ${n} ${plural(n, 'commit')}`, `<ul>${commits.map((c) => `<li>${c.short_id} - ${escape(c.title)}</li>`).join('')}</ul>`];
  if (compareUrl) parts.push(`[Compare with previous version](${compareUrl})`);
  return parts.join('\n\n');
}
