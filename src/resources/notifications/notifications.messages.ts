import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/index.ts';
import type { UserRow } from '../../platform/access/actor.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import type { MailMessage } from '../../platform/mail.ts';
import type { EventName } from '../notification-settings/notification-settings.service.ts';
import type { Reason, Recipient } from './notifications.recipients.ts';

// The e-mails themselves, as the reference's mailers write them (app/mailers/notify.rb, emails/*.rb): the subject
// `<project name> | <title> (#iid)` (`!iid` for merge requests, `Re: ` once the thread exists), a plain-text and an
// HTML body (every user-written text escaped), and the headers mail filters and threading rely on:
// - `Message-ID` `<issue_<id>@host>` / `<merge_request_<id>@host>` for the message that opens a record's thread (a comment
//   on a commit or snippet answers `<commit_<sha>@host>` / `<project_snippet_<id>@host>`),
//   `<note_<id>@host>` for a comment, a random one otherwise; `In-Reply-To` / `References` point at the thread;
// - `X-GitLab-Project`, `X-GitLab-Project-Id`, `X-GitLab-Project-Path`, `List-Id` (`<path> <id.path-as-domain.host>`);
// - `X-GitLab-Issue-ID` / `-IID` / `-State` (`X-GitLab-MergeRequest-...`), `X-GitLab-NotificationReason`,
//   `X-Bellows-Notification-Event` (the event, e.g. `new_issue`);
// - `List-Unsubscribe` (with `List-Unsubscribe-Post` for one-click) naming the signed link that unsubscribes the
//   recipient from the record.

/** The record whose thread a message belongs to: an issue or merge request, or the commit or snippet of a comment. */
export type Thread =
  | { kind: 'Issue' | 'MergeRequest'; id: number; iid: number; state: string; title: string }
  | { kind: 'Commit'; id: string; title: string }
  | { kind: 'Snippet'; id: number; title: string };
export type IssuableThread = Extract<Thread, { kind: 'Issue' | 'MergeRequest' }>;

/** A paragraph of a body: plain text, a link, or preformatted user text. */
export type Block = { text: string } | { text: string; href: string } | { pre: string };

export interface Draft {
  project: ProjectRow;
  thread: Thread | null;
  event: EventName;
  /** Whose action it was: the display name of the From address. */
  sender: UserRow | null;
  /** The subject after `<project name> | `. */
  subject: string;
  /** Opens the thread (true) or answers in it. */
  opens: boolean;
  /** A comment: its id (its Message-ID) and the earlier comments of its discussion it answers. */
  note?: { id: number; earlier: number[] };
  blocks: Block[];
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function host(config: Config): string {
  return new URL(config.externalUrl).hostname;
}

/** The thread's root Message-ID, as the reference names it after the record's model (`project_snippet` for a snippet). */
export function threadMessageId(config: Config, thread: Thread): string {
  const model = { Issue: 'issue', MergeRequest: 'merge_request', Commit: 'commit', Snippet: 'project_snippet' }[thread.kind];
  return `<${model}_${thread.id}@${host(config)}>`;
}

export function recordUrl(config: Config, project: Pick<ProjectRow, 'full_path'>, thread: Thread): string {
  const path = thread.kind === 'Issue' ? `issues/${thread.iid}` : thread.kind === 'MergeRequest' ? `merge_requests/${thread.iid}`
    : thread.kind === 'Commit' ? `commit/${thread.id}` : `snippets/${thread.id}`;
  return `${config.externalUrl}/${project.full_path}/-/${path}`;
}

/** The reference's list id: `<project id>.<path segments reversed, as a domain>.<host>`. */
export function listId(config: Config, project: Pick<ProjectRow, 'id' | 'full_path'>): string {
  const asDomain = project.full_path.toLowerCase().split('/').reverse().join('/').replace(/[^a-z0-9/]/g, '-').replace(/\/+/g, '.').replace(/(^\.+|\.+$)/g, '');
  return `${project.id}.${asDomain}.${host(config)}`.slice(0, 255);
}

const REASON_TEXT: Record<Exclude<Reason, null>, string> = {
  own_activity: 'You are receiving this email because of your activity.',
  assigned: 'You have been assigned.',
  review_requested: 'You have been asked to review.',
  mentioned: 'You have been mentioned.',
  subscribed: 'You are receiving this email because you are subscribed.',
};

/** The message for one recipient. `unsubscribeUrl`: the recipient's signed link for the thread (null without a thread). */
export function render(config: Config, d: Draft, r: Recipient, unsubscribeUrl: string | null): MailMessage {
  const subject = `${d.opens ? '' : 'Re: '}${d.project.name} | ${d.subject}`;
  const headers: Record<string, string> = {
    'Auto-Submitted': 'auto-generated',
    'X-Auto-Response-Suppress': 'All',
    'X-GitLab-Project': d.project.name,
    'X-GitLab-Project-Id': String(d.project.id),
    'X-GitLab-Project-Path': d.project.full_path,
    'List-Id': `${d.project.full_path} <${listId(config, d.project)}>`,
    'X-Bellows-Notification-Event': d.event,
  };
  if (d.thread && (d.thread.kind === 'Issue' || d.thread.kind === 'MergeRequest')) {
    const prefix = `X-GitLab-${d.thread.kind}`;
    headers[`${prefix}-ID`] = String(d.thread.id);
    headers[`${prefix}-IID`] = String(d.thread.iid);
    headers[`${prefix}-State`] = d.thread.state;
  }
  if (r.reason) headers['X-GitLab-NotificationReason'] = r.reason;
  if (unsubscribeUrl) {
    headers['List-Unsubscribe'] = `<${unsubscribeUrl}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  let messageId = `<${randomBytes(16).toString('hex')}@${host(config)}>`;
  let inReplyTo: string | undefined;
  let references: string[] | undefined;
  if (d.thread) {
    const root = threadMessageId(config, d.thread);
    if (d.opens) messageId = root;
    else {
      if (d.note) messageId = `<note_${d.note.id}@${host(config)}>`;
      references = [root, ...(d.note?.earlier ?? []).map((id) => `<note_${id}@${host(config)}>`)];
      inReplyTo = references[references.length - 1];
    }
  }

  const footer: Block[] = [];
  if (r.reason) footer.push({ text: REASON_TEXT[r.reason] });
  footer.push({ text: `You're receiving this email because of your account on ${host(config)}.` });
  if (unsubscribeUrl) footer.push({ text: 'Unsubscribe from this thread', href: unsubscribeUrl });

  const text = [...d.blocks, { text: '—' }, ...footer].map((b) => ('pre' in b ? b.pre : 'href' in b ? `${b.text}: ${b.href}` : b.text)).join('\n\n');
  const html = [
    '<!DOCTYPE html>', '<html lang="en">', '<head><meta charset="utf-8"></head>', '<body>',
    ...d.blocks.map(blockHtml),
    '<hr>',
    ...footer.map((b) => `<div style="color:#666;font-size:small">${blockHtml(b)}</div>`),
    '</body>', '</html>',
  ].join('\n');
  return {
    to: r.email, fromName: d.sender?.name ?? 'Bellows', subject, text: `${text}\n`, html, messageId, inReplyTo, references, headers,
  };
}

function blockHtml(b: Block): string {
  if ('pre' in b) return `<div style="white-space:pre-wrap">${escapeHtml(b.pre)}</div>`;
  if ('href' in b) return `<p><a href="${escapeHtml(b.href)}">${escapeHtml(b.text)}</a></p>`;
  return `<p>${escapeHtml(b.text)}</p>`;
}
