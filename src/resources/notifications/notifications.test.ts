import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp, call, type TestApp } from '../../../test/support/app.ts';
import { parseMail, startSmtpReceiver, type ReceivedMail, type SmtpReceiver } from '../../../test/support/smtp-receiver.ts';
import { addMember, castRoles, commitFiles, makeIssue, makeLabel, makeMergeRequest, makeProject, makeSnippet, quickUser, Role, type RoleCast, type TestUser } from '../../../test/support/fixtures.ts';
import type { ManualClock } from '../../platform/clock.ts';
import type { ProjectRow } from '../../platform/membership.ts';

// Notification e-mails, received by a real SMTP server on loopback.

type Received = ReceivedMail;

let t: TestApp;
let smtp: SmtpReceiver;
let n = 0;

before(async () => {
  smtp = await startSmtpReceiver();
  t = await buildTestApp({ config: { smtp: { address: '127.0.0.1', port: smtp.port, user: null, password: null, tls: false }, emailFrom: 'git@bellows.test' } });
});
after(async () => {
  await t.close();
  await smtp.close();
});

/** Runs the queued jobs and answers what arrived since the last call. */
async function delivered(): Promise<Received[]> {
  await t.app.jobs.drain();
  return smtp.take();
}
const toOf = (mails: Received[]) => mails.map((m) => m.to[0]).sort();
const mailOf = (u: TestUser) => u.user.email;
const forUser = (mails: Received[], u: TestUser) => {
  const found = mails.filter((m) => m.to[0] === u.user.email);
  assert.equal(found.length, 1, `one message to ${u.user.username}, got ${found.length}`);
  return found[0];
};

async function setLevel(u: TestUser, where: string, body: Record<string, unknown>) {
  const r = await call(t.app, 'PUT', `${where}/notification_settings`, { token: u.token, body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

interface World { project: ProjectRow; roles: RoleCast; watcher: TestUser; guestWatcher: TestUser; mentionOnly: TestUser; customOff: TestUser; customOn: TestUser; disabled: TestUser }

/**
 * A private project with its role cast and, as Developers unless said: a watcher, a Guest watcher, a user at the
 * `mention` level, one at `custom` with the event under test off, one with it on, and one at `disabled`.
 */
async function world(event: string): Promise<World> {
  const project = await makeProject(t.app, { visibility: 0, repository: true, path: `proj${++n}` });
  const roles = await castRoles(t.app, project);
  const member = async (level: number) => {
    const u = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: project.id }, u.user.id, level);
    return u;
  };
  const w: World = {
    project, roles,
    watcher: await member(Role.developer), guestWatcher: await member(Role.guest), mentionOnly: await member(Role.developer),
    customOff: await member(Role.developer), customOn: await member(Role.developer), disabled: await member(Role.developer),
  };
  const p = `/projects/${project.id}`;
  await setLevel(w.watcher, p, { level: 'watch' });
  await setLevel(w.guestWatcher, p, { level: 'watch' });
  await setLevel(w.mentionOnly, p, { level: 'mention' });
  await setLevel(w.customOff, p, { level: 'custom', [event]: false });
  await setLevel(w.customOn, p, { level: 'custom', [event]: true });
  await setLevel(w.disabled, p, { level: 'disabled' });
  await t.app.jobs.drain();
  smtp.take();
  return w;
}

const host = 'bellows.test';

describe('issues', () => {
  test('new_issue: watchers, custom with new_issue on, the assignee and the mentioned; not the author, custom off, disabled, mention level unmentioned', async () => {
    const w = await world('new_issue');
    const r = await call(t.app, 'POST', `/projects/${w.project.id}/issues`, {
      token: w.roles.developer.token,
      body: { title: 'Broken <build>', description: 'See @' + w.mentionOnly.user.username + ' & <b>this</b>', assignee_ids: [w.roles.reporter.user.id] },
    });
    assert.equal(r.status, 201);
    const mails = await delivered();
    // The Guest watcher reads a non-confidential issue of a private project (Guests read issues).
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.mentionOnly, w.customOn, w.roles.reporter].map(mailOf).sort());
    const m = forUser(mails, w.watcher);
    const issueId = r.body.id;
    assert.equal(m.headers.get('subject'), `${w.project.name} | Broken <build> (#${r.body.iid})`);
    assert.equal(m.headers.get('message-id'), `<issue_${issueId}@${host}>`);
    assert.equal(m.headers.get('in-reply-to'), undefined);
    assert.match(m.headers.get('from')!, /^"?User [^"]+"? <git@bellows\.test>$/);
    assert.equal(m.headers.get('x-gitlab-project'), w.project.name);
    assert.equal(m.headers.get('x-gitlab-project-id'), String(w.project.id));
    assert.equal(m.headers.get('x-gitlab-project-path'), w.project.full_path);
    assert.equal(m.headers.get('x-gitlab-issue-iid'), String(r.body.iid));
    assert.equal(m.headers.get('x-gitlab-issue-id'), String(issueId));
    assert.equal(m.headers.get('x-bellows-notification-event'), 'new_issue');
    assert.equal(m.headers.get('x-gitlab-notificationreason'), undefined);
    const [ns, proj] = w.project.full_path.split('/');
    assert.equal(m.headers.get('list-id'), `${w.project.full_path} <${w.project.id}.${proj}.${ns}.${host}>`);
    assert.match(m.headers.get('list-unsubscribe')!, /^<http:\/\/bellows\.test\/-\/sent_notifications\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\/unsubscribe>$/);
    assert.equal(forUser(mails, w.roles.reporter).headers.get('x-gitlab-notificationreason'), 'assigned');
    assert.equal(forUser(mails, w.mentionOnly).headers.get('x-gitlab-notificationreason'), 'mentioned');
    // Text as written, HTML escaped.
    assert.ok(m.text.includes(`See @${w.mentionOnly.user.username} & <b>this</b>`), m.text);
    assert.ok(m.html.includes('See @' + w.mentionOnly.user.username + ' &amp; &lt;b&gt;this&lt;/b&gt;'), m.html);
    assert.ok(!m.html.includes('<b>this</b>'));
  });

  test('a confidential issue reaches only those who may read it', async () => {
    const w = await world('new_issue');
    const reporterWatcher = await quickUser(t.app);
    await addMember(t.app, { type: 'Project', id: w.project.id }, reporterWatcher.user.id, Role.reporter);
    await setLevel(reporterWatcher, `/projects/${w.project.id}`, { level: 'watch' });
    await t.app.jobs.drain();
    const r = await call(t.app, 'POST', `/projects/${w.project.id}/issues`, { token: w.roles.developer.token, body: { title: 'Secret', confidential: true } });
    assert.equal(r.status, 201);
    const mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.customOn, reporterWatcher].map(mailOf).sort());
  });

  test('close_issue and reopen_issue answer in the issue\'s thread; custom with the event off is skipped', async () => {
    const w = await world('close_issue');
    const issue = await makeIssue(t.app, w.project, { title: 'Flaky', authorId: w.roles.reporter.user.id });
    const closed = await call(t.app, 'PUT', `/projects/${w.project.id}/issues/${issue.iid}`, { token: w.roles.maintainer.token, body: { state_event: 'close' } });
    assert.equal(closed.status, 200);
    let mails = await delivered();
    // The author participates; the closer is not told of their own action.
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.customOn, w.roles.reporter].map(mailOf).sort());
    const m = forUser(mails, w.roles.reporter);
    assert.equal(m.headers.get('subject'), `Re: ${w.project.name} | Flaky (#${issue.iid})`);
    assert.equal(m.headers.get('in-reply-to'), `<issue_${issue.id}@${host}>`);
    assert.equal(m.headers.get('references'), `<issue_${issue.id}@${host}>`);
    assert.match(m.headers.get('message-id')!, new RegExp(`^<[0-9a-f]{32}@${host}>$`));
    assert.equal(m.headers.get('x-gitlab-issue-state'), 'closed');
    assert.ok(m.text.includes(`Issue #${issue.iid} was closed by ${w.roles.maintainer.user.name}`), m.text);

    const reopened = await call(t.app, 'PUT', `/projects/${w.project.id}/issues/${issue.iid}`, { token: w.roles.maintainer.token, body: { state_event: 'reopen' } });
    assert.equal(reopened.status, 200);
    mails = await delivered();
    // customOn has close_issue on, not reopen_issue.
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.roles.reporter].map(mailOf).sort());
    assert.ok(forUser(mails, w.watcher).text.includes('was reopened by'));
  });

  test('reassign_issue: the new and the previous assignee, as mentions', async () => {
    const w = await world('reassign_issue');
    const issue = await makeIssue(t.app, w.project, { title: 'Owner', authorId: w.roles.owner.user.id, assigneeIds: [w.roles.reporter.user.id] });
    // The mention-level user becomes the assignee: a reassignment mentions them.
    const r = await call(t.app, 'PUT', `/projects/${w.project.id}/issues/${issue.iid}`, { token: w.roles.maintainer.token, body: { assignee_ids: [w.mentionOnly.user.id] } });
    assert.equal(r.status, 200);
    const mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.customOn, w.mentionOnly, w.roles.reporter, w.roles.owner].map(mailOf).sort());
    assert.equal(forUser(mails, w.mentionOnly).headers.get('x-gitlab-notificationreason'), 'assigned');
    assert.ok(forUser(mails, w.roles.reporter).text.includes(`Assignee changed from ${w.roles.reporter.user.name} to ${w.mentionOnly.user.name}`));
  });

  test('issue_due: at 00:50 UTC, open issues due the next day, to participants (the author too), not watchers', async () => {
    const w = await world('issue_due');
    const clock = t.clock as ManualClock;
    // The next run is at 00:50 of the coming day; it mails about issues due the day after it.
    const runAt = Math.floor(clock.now() / 86_400_000) * 86_400_000 + 86_400_000 + 50 * 60_000;
    const dueDay = runAt - 50 * 60_000 + 86_400_000;
    const due = await makeIssue(t.app, w.project, { title: 'Due soon', authorId: w.roles.reporter.user.id, assigneeIds: [w.roles.developer.user.id], dueDate: dueDay });
    await makeIssue(t.app, w.project, { title: 'Sooner', authorId: w.roles.reporter.user.id, dueDate: dueDay - 86_400_000 });
    await makeIssue(t.app, w.project, { title: 'Closed', authorId: w.roles.reporter.user.id, dueDate: dueDay, state: 'closed' });
    await t.app.jobs.scheduleRecurring();
    assert.deepEqual(await delivered(), [], 'nothing before the run time');
    clock.set(runAt);
    const mails = await delivered();
    assert.deepEqual(toOf(mails), [w.customOn, w.roles.reporter, w.roles.developer].map(mailOf).sort());
    const m = forUser(mails, w.roles.reporter);
    assert.ok(m.text.includes(`Issue #${due.iid} is due on ${new Date(dueDay).toISOString().slice(0, 10)}`), m.text);
    assert.equal(m.headers.get('in-reply-to'), `<issue_${due.id}@${host}>`);
    assert.equal(m.headers.get('x-bellows-notification-event'), 'issue_due');
  });

  test('participants who lost access or were blocked get nothing; subscribers of a new issue\'s labels do; an action only its actor follows sends nothing', async () => {
    const project = await makeProject(t.app, { visibility: 0, path: `proj${++n}` });
    const roles = await castRoles(t.app, project);
    const label = await makeLabel(t.app, { projectId: project.id, title: 'needs-triage' });
    const subscribed = await call(t.app, 'POST', `/projects/${project.id}/labels/${label.id}/subscribe`, { token: roles.reporter.token });
    assert.equal(subscribed.status, 201, JSON.stringify(subscribed.body));
    const quiet = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: 'Alone' } });
    assert.equal(quiet.status, 201);
    assert.deepEqual(await delivered(), [], 'only its author follows an unlabelled issue');
    assert.equal(Number((await t.app.db.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('kind', '=', 'notifications.deliver').where('state', '=', 'queued').executeTakeFirstOrThrow()).n), 0);

    const r = await call(t.app, 'POST', `/projects/${project.id}/issues`, { token: roles.developer.token, body: { title: 'Triage me', labels: 'needs-triage' } });
    assert.equal(r.status, 201);
    let mails = await delivered();
    assert.deepEqual(toOf(mails), [mailOf(roles.reporter)]);
    assert.equal(forUser(mails, roles.reporter).headers.get('x-gitlab-notificationreason'), 'subscribed');

    // Three members comment, so all three participate; then one leaves the project and one is blocked.
    const leaver = await quickUser(t.app);
    const blocked = await quickUser(t.app);
    for (const u of [leaver, blocked]) await addMember(t.app, { type: 'Project', id: project.id }, u.user.id, Role.developer);
    for (const u of [leaver, blocked, roles.guest]) {
      const c = await call(t.app, 'POST', `/projects/${project.id}/issues/${r.body.iid}/notes`, { token: u.token, body: { body: 'Seen it' } });
      assert.equal(c.status, 201);
    }
    await delivered();
    assert.equal((await call(t.app, 'DELETE', `/projects/${project.id}/members/${leaver.user.id}`, { token: roles.owner.token })).status, 204);
    assert.equal((await call(t.app, 'POST', `/users/${blocked.user.id}/block`, { token: roles.admin.token })).status, 201);
    const closed = await call(t.app, 'PUT', `/projects/${project.id}/issues/${r.body.iid}`, { token: roles.maintainer.token, body: { state_event: 'close' } });
    assert.equal(closed.status, 200);
    mails = await delivered();
    // The author and the Guest who commented; the label's subscriber hears of new issues only.
    assert.deepEqual(toOf(mails), [roles.developer, roles.guest].map(mailOf).sort());
    assert.ok(forUser(mails, roles.guest).text.includes(`was closed by ${roles.maintainer.user.name}`));
  });
});

describe('notes', () => {
  test('new_note: participants and the mentioned, threaded under the issue and the earlier comments', async () => {
    const w = await world('new_note');
    const issue = await makeIssue(t.app, w.project, { title: 'Talk', authorId: w.roles.reporter.user.id });
    const first = await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/discussions`, { token: w.roles.maintainer.token, body: { body: 'First' } });
    assert.equal(first.status, 201);
    await delivered();
    const reply = await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/discussions/${first.body.id}/notes`, {
      token: w.roles.developer.token, body: { body: `Agreed, @${w.mentionOnly.user.username}` },
    });
    assert.equal(reply.status, 201);
    const mails = await delivered();
    // Participants: the author and the first commenter; the replier is not told of their own comment.
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.mentionOnly, w.customOn, w.roles.reporter, w.roles.maintainer].map(mailOf).sort());
    const m = forUser(mails, w.roles.maintainer);
    const firstNoteId = first.body.notes[0].id;
    assert.equal(m.headers.get('message-id'), `<note_${reply.body.id}@${host}>`);
    assert.equal(m.headers.get('references'), `<issue_${issue.id}@${host}> <note_${firstNoteId}@${host}>`);
    assert.equal(m.headers.get('in-reply-to'), `<note_${firstNoteId}@${host}>`);
    assert.equal(m.headers.get('subject'), `Re: ${w.project.name} | Talk (#${issue.iid})`);
    assert.ok(m.text.startsWith(`Agreed, @${w.mentionOnly.user.username}`));
  });

  test('@all mentions every member when the author is one; from a non-member it mentions nobody', async () => {
    const w = await world('new_note');
    const issue = await makeIssue(t.app, w.project, { title: 'Everyone', authorId: w.roles.reporter.user.id });
    const admin = await quickUser(t.app, { admin: true });
    const outsider = await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: admin.token, body: { body: 'Hey @all' } });
    assert.equal(outsider.status, 201);
    let mails = await delivered();
    assert.ok(!toOf(mails).includes(mailOf(w.mentionOnly)), 'a non-member\'s @all mentions nobody');
    assert.ok(!toOf(mails).includes(mailOf(w.roles.guest)));
    const r = await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.developer.token, body: { body: 'Heads up @all' } });
    assert.equal(r.status, 201);
    mails = await delivered();
    // Every member (the personal namespace's owner too) but the author and those at `disabled`; customOff, whose
    // new_note is off, is mentioned (custom takes mentions); the administrator who commented before participates.
    const ns = await t.app.db.selectFrom('namespaces').innerJoin('users', 'users.id', 'namespaces.owner_id').select('users.email')
      .where('namespaces.id', '=', w.project.namespace_id).executeTakeFirstOrThrow();
    assert.deepEqual(toOf(mails), [
      ...[w.watcher, w.guestWatcher, w.mentionOnly, w.customOff, w.customOn, w.roles.guest, w.roles.reporter, w.roles.maintainer, w.roles.owner, admin].map(mailOf),
      ns.email,
    ].sort());
    assert.equal(forUser(mails, w.mentionOnly).headers.get('x-gitlab-notificationreason'), 'mentioned');
  });

  test('an internal note reaches Reporters and up only', async () => {
    const w = await world('new_note');
    const issue = await makeIssue(t.app, w.project, { title: 'Internal', authorId: w.roles.reporter.user.id });
    const r = await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.maintainer.token, body: { body: 'hush', internal: true } });
    assert.equal(r.status, 201);
    assert.deepEqual(toOf(await delivered()), [w.watcher, w.customOn, w.roles.reporter].map(mailOf).sort());
  });
});

describe('notes on commits and snippets', () => {
  test('new_note on a commit: its author and committer (users by e-mail), commenters, the mentioned, watchers; not a Guest, the commenter, custom off, disabled, an outsider', async () => {
    const w = await world('new_note');
    const outsider = await quickUser(t.app);
    // Committed by the Developer, authored as the Reporter (matched by e-mail).
    const made = await call(t.app, 'POST', `/projects/${w.project.id}/repository/commits`, {
      token: w.roles.developer.token,
      body: { branch: 'main', commit_message: 'Add notes.txt\n\nThe body', author_email: w.roles.reporter.user.email, author_name: 'Someone', actions: [{ action: 'create', file_path: 'notes.txt', content: 'n\n' }] },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const sha: string = made.body.id;
    await delivered();
    const first = await call(t.app, 'POST', `/projects/${w.project.id}/repository/commits/${sha}/comments`, { token: w.roles.owner.token, body: { note: 'First look' } });
    assert.equal(first.status, 201);
    let mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.customOn, w.roles.reporter, w.roles.developer].map(mailOf).sort());
    const r = await call(t.app, 'POST', `/projects/${w.project.id}/repository/commits/${sha}/comments`, {
      token: w.roles.maintainer.token, body: { note: `Why? @${w.mentionOnly.user.username} @${outsider.user.username}` },
    });
    assert.equal(r.status, 201);
    mails = await delivered();
    // The earlier commenter (the Owner) participates now; the Guest watcher may not read the code of a private project.
    assert.deepEqual(toOf(mails), [w.watcher, w.mentionOnly, w.customOn, w.roles.reporter, w.roles.developer, w.roles.owner].map(mailOf).sort());
    const noteId = (await t.app.db.selectFrom('notes').select('id').where('noteable_type', '=', 'Commit').where('commit_id', '=', sha)
      .orderBy('id', 'desc').executeTakeFirstOrThrow()).id;
    const m = forUser(mails, w.roles.reporter);
    assert.equal(m.headers.get('subject'), `Re: ${w.project.name} | Add notes.txt (${sha.slice(0, 8)})`);
    assert.equal(m.headers.get('message-id'), `<note_${noteId}@${host}>`);
    assert.equal(m.headers.get('in-reply-to'), `<commit_${sha}@${host}>`);
    assert.equal(m.headers.get('references'), `<commit_${sha}@${host}>`);
    assert.equal(m.headers.get('x-bellows-notification-event'), 'new_note');
    assert.equal(m.headers.get('x-gitlab-project-id'), String(w.project.id));
    assert.equal(m.headers.get('list-unsubscribe'), undefined, 'a commit has no subscription to leave');
    assert.ok(m.text.startsWith(`Why? @${w.mentionOnly.user.username}`), m.text);
    assert.ok(m.text.includes(`http://${host}/${w.project.full_path}/-/commit/${sha}#note_${noteId}`), m.text);
    assert.equal(forUser(mails, w.mentionOnly).headers.get('x-gitlab-notificationreason'), 'mentioned');

    // An author matched by a confirmed secondary e-mail participates; one matched only by an unconfirmed one does not
    // (customOff would be mailed as a participant).
    const now = t.clock.now();
    const alt = (u: TestUser) => `alt-${u.user.username}@example.com`;
    await t.app.db.insertInto('emails').values([
      { user_id: w.roles.owner.user.id, email: alt(w.roles.owner), email_lower: alt(w.roles.owner), confirmed_at: now, created_at: now, updated_at: now },
      { user_id: w.customOff.user.id, email: alt(w.customOff), email_lower: alt(w.customOff), confirmed_at: null, created_at: now, updated_at: now },
    ]).execute();
    for (const [author, expected] of [[w.roles.owner, [w.watcher, w.customOn, w.roles.developer, w.roles.owner]], [w.customOff, [w.watcher, w.customOn, w.roles.developer]]] as const) {
      const c = await call(t.app, 'POST', `/projects/${w.project.id}/repository/commits`, {
        token: w.roles.developer.token,
        body: { branch: 'main', commit_message: `By ${author.user.username}`, author_email: alt(author), actions: [{ action: 'create', file_path: `${author.user.username}.txt`, content: 'x\n' }] },
      });
      assert.equal(c.status, 201);
      assert.equal((await call(t.app, 'POST', `/projects/${w.project.id}/repository/commits/${c.body.id}/comments`, { token: w.roles.maintainer.token, body: { note: 'Hm' } })).status, 201);
      assert.deepEqual(toOf(await delivered()), expected.map(mailOf).sort(), author.user.username);
    }
  });

  test('new_note on a project snippet: its author, commenters, the mentioned, watchers (a Guest too); not the commenter, custom off, disabled, an outsider', async () => {
    const w = await world('new_note');
    const outsider = await quickUser(t.app);
    const snippet = await makeSnippet(t.app, w.roles.reporter.user, { project: w.project, title: 'Scratch' });
    await delivered();
    const url = `/projects/${w.project.id}/snippets/${snippet.id}/notes`;
    assert.equal((await call(t.app, 'POST', url, { token: w.roles.developer.token, body: { body: 'First' } })).status, 201);
    let mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.customOn, w.roles.reporter].map(mailOf).sort());
    const r = await call(t.app, 'POST', url, { token: w.roles.maintainer.token, body: { body: `cc @${w.mentionOnly.user.username} @${outsider.user.username} <b>` } });
    assert.equal(r.status, 201);
    mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.mentionOnly, w.customOn, w.roles.reporter, w.roles.developer].map(mailOf).sort());
    const m = forUser(mails, w.roles.developer);
    assert.equal(m.headers.get('subject'), `Re: ${w.project.name} | Scratch ($${snippet.id})`);
    assert.equal(m.headers.get('message-id'), `<note_${r.body.id}@${host}>`);
    assert.equal(m.headers.get('in-reply-to'), `<project_snippet_${snippet.id}@${host}>`);
    assert.ok(m.text.includes(`http://${host}/${w.project.full_path}/-/snippets/${snippet.id}#note_${r.body.id}`), m.text);
    assert.ok(m.html.includes('&lt;b&gt;') && !m.html.includes('<b>'), 'the comment is escaped in HTML');
  });
});

describe('merge requests', () => {
  async function mrWorld(event: string) {
    const w = await world(event);
    await commitFiles(t.app, w.project, 'main', { 'README.md': 'hello\n' });
    const branch = `feature-${++n}`;
    await commitFiles(t.app, w.project, branch, { 'a.txt': 'a\n' }, { from: 'main', message: 'Add a' });
    return { ...w, branch };
  }

  test('new_merge_request, then push_to_merge_request (not to watchers), close, reopen, reassign, merge', async () => {
    const w = await mrWorld('new_merge_request');
    const mr = await makeMergeRequest(t.app, w.roles.developer.token, w.project, { source_branch: w.branch, target_branch: 'main', title: 'Add a', reviewer_ids: [w.roles.maintainer.user.id] });
    let mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.customOn, w.roles.maintainer].map(mailOf).sort());
    let m = forUser(mails, w.watcher);
    assert.equal(m.headers.get('message-id'), `<merge_request_${mr.id}@${host}>`);
    assert.equal(m.headers.get('subject'), `${w.project.name} | Add a (!${mr.iid})`);
    assert.equal(m.headers.get('x-gitlab-mergerequest-iid'), String(mr.iid));
    assert.ok(m.text.includes(`Branches: ${w.branch} to main`));

    // A push to the source branch: participants (the reviewer), not watchers.
    const sha = await commitFiles(t.app, w.project, w.branch, { 'b.txt': 'b\n' }, { message: 'Add b' });
    const { refreshMergeRequests } = await import('../merge-requests/merge-requests.refresh.ts');
    await refreshMergeRequests(t.app, w.project, [`refs/heads/${w.branch}`], w.roles.developer.user.id);
    mails = await delivered();
    assert.deepEqual(toOf(mails), [w.roles.maintainer].map(mailOf));
    m = mails[0];
    assert.equal(m.headers.get('in-reply-to'), `<merge_request_${mr.id}@${host}>`);
    assert.ok(m.text.includes(`* ${sha.slice(0, 8)} - Add b`), m.text);

    const url = `/projects/${w.project.id}/merge_requests/${mr.iid}`;
    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.maintainer.token, body: { state_event: 'close' } })).status, 200);
    mails = await delivered();
    // customOn has only new_merge_request on; the author now participates.
    assert.deepEqual(toOf(mails), [w.watcher, w.roles.developer].map(mailOf).sort());
    assert.ok(forUser(mails, w.roles.developer).text.includes(`Merge request !${mr.iid} was closed by ${w.roles.maintainer.user.name}`));

    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.maintainer.token, body: { state_event: 'reopen' } })).status, 200);
    assert.deepEqual(toOf(await delivered()), [w.watcher, w.roles.developer].map(mailOf).sort());

    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.maintainer.token, body: { assignee_ids: [w.mentionOnly.user.id] } })).status, 200);
    mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.mentionOnly, w.roles.developer].map(mailOf).sort());
    assert.equal(forUser(mails, w.mentionOnly).headers.get('x-gitlab-notificationreason'), 'assigned');

    const merged = await call(t.app, 'PUT', `${url}/merge`, { token: w.roles.maintainer.token });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    mails = await delivered();
    // The assignee participates, but at the mention level only mentions reach them.
    assert.deepEqual(toOf(mails), [w.watcher, w.roles.developer].map(mailOf).sort());
    assert.ok(forUser(mails, w.watcher).text.includes(`Merge request !${mr.iid} was merged by ${w.roles.maintainer.user.name}`));
    assert.equal(forUser(mails, w.watcher).headers.get('x-gitlab-mergerequest-state'), 'merged');
  });
  test('change_reviewer_merge_request: the previous and new reviewers (as mentions), participants, watchers, custom on; not custom off, disabled, a Guest, the actor', async () => {
    const w = await mrWorld('change_reviewer_merge_request');
    const mr = await makeMergeRequest(t.app, w.roles.developer.token, w.project, { source_branch: w.branch, target_branch: 'main', title: 'Review me', reviewer_ids: [w.roles.maintainer.user.id] });
    await delivered();
    const url = `/projects/${w.project.id}/merge_requests/${mr.iid}`;
    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.owner.token, body: { reviewer_ids: [w.mentionOnly.user.id] } })).status, 200);
    let mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.mentionOnly, w.customOn, w.roles.developer, w.roles.maintainer].map(mailOf).sort());
    const added = forUser(mails, w.mentionOnly);
    assert.equal(added.headers.get('x-gitlab-notificationreason'), 'review_requested');
    assert.equal(added.headers.get('x-bellows-notification-event'), 'change_reviewer_merge_request');
    assert.equal(added.headers.get('subject'), `Re: ${w.project.name} | Review me (!${mr.iid})`);
    assert.equal(added.headers.get('in-reply-to'), `<merge_request_${mr.id}@${host}>`);
    assert.ok(added.text.startsWith(`Reviewer changed from ${w.roles.maintainer.user.name} to ${w.mentionOnly.user.name}`), added.text);
    assert.equal(forUser(mails, w.roles.maintainer).headers.get('x-gitlab-notificationreason'), undefined);
    assert.ok(mails.every((m) => m.headers.get('x-bellows-notification-event') === 'change_reviewer_merge_request'), 'no reassignment mail');

    // Every reviewer removed: the one removed is told, as a mention.
    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.owner.token, body: { reviewer_ids: [] } })).status, 200);
    mails = await delivered();
    assert.deepEqual(toOf(mails), [w.watcher, w.mentionOnly, w.customOn, w.roles.developer].map(mailOf).sort());
    assert.ok(forUser(mails, w.mentionOnly).text.startsWith('All reviewers were removed.'));

    // An unchanged list sends nothing.
    assert.equal((await call(t.app, 'PUT', url, { token: w.roles.owner.token, body: { reviewer_ids: [], title: 'Review me' } })).status, 200);
    assert.deepEqual(toOf(await delivered()), []);
  });
});

describe('issues closed by a merge', () => {
  test('Closes #N: close_issue mail as an explicit close, the state event naming the merge request, the system note', async () => {
    const w = await world('close_issue');
    await commitFiles(t.app, w.project, 'main', { 'README.md': 'hello\n' });
    const branch = `fix-${++n}`;
    await commitFiles(t.app, w.project, branch, { 'fix.txt': 'fixed\n' }, { from: 'main', message: 'Fix' });
    const issue = await makeIssue(t.app, w.project, { title: 'Broken build', authorId: w.roles.reporter.user.id });
    const untouched = await makeIssue(t.app, w.project, { title: 'Other', authorId: w.roles.reporter.user.id });
    const mr = await makeMergeRequest(t.app, w.roles.developer.token, w.project, { source_branch: branch, target_branch: 'main', title: 'Fix', description: `Closes #${issue.iid}` });
    await delivered();
    const merged = await call(t.app, 'PUT', `/projects/${w.project.id}/merge_requests/${mr.iid}/merge`, { token: w.roles.maintainer.token });
    assert.equal(merged.status, 200, JSON.stringify(merged.body));
    const mails = (await delivered()).filter((m) => m.headers.get('x-bellows-notification-event') === 'close_issue');
    // As an explicit close: watchers, custom with close_issue on, the author; not the merger, custom off, disabled.
    assert.deepEqual(toOf(mails), [w.watcher, w.guestWatcher, w.customOn, w.roles.reporter].map(mailOf).sort());
    const m = forUser(mails, w.roles.reporter);
    assert.equal(m.headers.get('in-reply-to'), `<issue_${issue.id}@${host}>`);
    assert.ok(m.text.includes(`Issue #${issue.iid} was closed by ${w.roles.maintainer.user.name}`), m.text);

    const shown = await call(t.app, 'GET', `/projects/${w.project.id}/issues/${issue.iid}`, { token: w.roles.maintainer.token });
    assert.equal(shown.body.state, 'closed');
    assert.equal(shown.body.closed_by.id, w.roles.maintainer.user.id);
    const events = await call(t.app, 'GET', `/projects/${w.project.id}/issues/${issue.iid}/resource_state_events`, { token: w.roles.maintainer.token });
    assert.equal(events.status, 200);
    assert.equal(events.body.length, 1);
    assert.equal(events.body[0].state, 'closed');
    assert.equal(events.body[0].source_merge_request_id, mr.id);
    assert.equal(events.body[0].user.id, w.roles.maintainer.user.id);
    const notes = await call(t.app, 'GET', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.maintainer.token });
    assert.deepEqual(notes.body.filter((x: any) => x.system).map((x: any) => [x.body, x.author.id]), [[`closed via merge request !${mr.iid}`, w.roles.maintainer.user.id]]);
    const other = await call(t.app, 'GET', `/projects/${w.project.id}/issues/${untouched.iid}`, { token: w.roles.maintainer.token });
    assert.equal(other.body.state, 'opened');
  });
});

describe('projects', () => {
  test('moved_project: members by their level (participating and watch yes, custom off and disabled no), the mover too', async () => {
    const w = await world('moved_project');
    const r = await call(t.app, 'PUT', `/projects/${w.project.id}`, { token: w.roles.owner.token, body: { path: `moved${++n}` } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const mails = await delivered();
    const nsOwner = await t.app.db.selectFrom('namespaces').select('owner_id').where('id', '=', w.project.namespace_id).executeTakeFirstOrThrow();
    const owner = (await t.app.db.selectFrom('users').select('email').where('id', '=', nsOwner.owner_id!).executeTakeFirstOrThrow()).email;
    const { guest, reporter, developer, maintainer, owner: projectOwner } = w.roles;
    assert.deepEqual(toOf(mails), [...[w.watcher, w.guestWatcher, w.customOn, guest, reporter, developer, maintainer, projectOwner].map(mailOf), owner].sort());
    const m = mails[0];
    assert.equal(m.headers.get('subject'), `${w.project.name} | Project was moved`);
    assert.ok(m.text.includes(`Project ${w.project.full_path} was moved to another location`));
    assert.equal(m.headers.get('list-unsubscribe'), undefined);
  });
});

describe('settings and unsubscribing', () => {
  test('notification_email is used; the unsubscribe link stops the thread\'s mail; a forged link is 404', async () => {
    const w = await world('new_issue');
    const other = `${w.roles.reporter.user.username}.public@example.com`;
    await t.app.db.updateTable('users').set({ public_email: other }).where('id', '=', w.roles.reporter.user.id).execute();
    await setLevel(w.roles.reporter, '', { notification_email: other });
    const issue = await makeIssue(t.app, w.project, { title: 'Noisy', authorId: w.roles.reporter.user.id });
    assert.equal((await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.developer.token, body: { body: 'one' } })).status, 201);
    let mails = await delivered();
    const m = mails.find((x) => x.to[0] === other);
    assert.ok(m, 'sent to the notification e-mail');
    const link = /^<(.+)>$/.exec(m.headers.get('list-unsubscribe')!)![1];
    const path = new URL(link).pathname;

    const forged = path.replace(/\.([A-Za-z0-9_-]+)\/unsubscribe$/, '.AAAA$1/unsubscribe');
    assert.equal((await t.app.inject({ method: 'GET', url: forged })).statusCode, 404);
    // A HEAD (a link checker) changes nothing.
    assert.notEqual((await t.app.inject({ method: 'HEAD', url: path })).statusCode, 200);
    assert.equal(await t.app.db.selectFrom('subscriptions').select('id').where('subscribable_type', '=', 'Issue').where('subscribable_id', '=', issue.id).executeTakeFirst(), undefined);
    const res = await t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'You have been unsubscribed from the issue "Noisy".\n');
    const sub = await t.app.db.selectFrom('subscriptions').select('subscribed').where('subscribable_type', '=', 'Issue').where('subscribable_id', '=', issue.id)
      .where('user_id', '=', w.roles.reporter.user.id).executeTakeFirstOrThrow();
    assert.equal(sub.subscribed, 0);

    assert.equal((await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.developer.token, body: { body: 'two' } })).status, 201);
    mails = await delivered();
    assert.ok(!mails.some((x) => x.to[0] === other), 'no more mail for the thread');
    // A mention still reaches them.
    assert.equal((await call(t.app, 'POST', `/projects/${w.project.id}/issues/${issue.iid}/notes`, { token: w.roles.developer.token, body: { body: `@${w.roles.reporter.user.username} look` } })).status, 201);
    mails = await delivered();
    assert.equal(mails.filter((x) => x.to[0] === other).length, 1);
  });
});

describe('delivery', () => {
  test('an SMTP server that refuses, then accepts: the delivery job retries', async () => {
    const w = await world('new_issue');
    smtp.refuse(1);
    assert.equal((await call(t.app, 'POST', `/projects/${w.project.id}/issues`, { token: w.roles.developer.token, body: { title: 'Retry me' } })).status, 201);
    const first = await delivered();
    assert.equal(first.length, 2);
    const failed = await t.app.db.selectFrom('jobs').select(['state', 'attempts', 'last_error']).where('kind', '=', 'notifications.deliver').where('state', '=', 'queued').execute();
    assert.equal(failed.length, 1);
    assert.equal(failed[0].attempts, 1);
    assert.match(failed[0].last_error!, /451/);
    (t.clock as ManualClock).advance(10 * 60_000);
    const later = await delivered();
    assert.equal(first.length + later.length, 3);
    assert.deepEqual([...toOf(first), ...toOf(later)].sort(), [w.watcher, w.guestWatcher, w.customOn].map(mailOf).sort());
  });

  test('without SMTP, each message is an .eml file under the data directory', async () => {
    const plain = await buildTestApp();
    try {
      const author = await quickUser(plain.app);
      const watcher = await quickUser(plain.app);
      const project = await makeProject(plain.app, { visibility: 0 });
      await addMember(plain.app, { type: 'Project', id: project.id }, author.user.id, Role.developer);
      await addMember(plain.app, { type: 'Project', id: project.id }, watcher.user.id, Role.developer);
      assert.equal((await call(plain.app, 'PUT', `/projects/${project.id}/notification_settings`, { token: watcher.token, body: { level: 'watch' } })).status, 200);
      assert.equal((await call(plain.app, 'POST', `/projects/${project.id}/issues`, { token: author.token, body: { title: 'Stored' } })).status, 201);
      await plain.app.jobs.drain();
      const dir = join(plain.dataDir, 'mail');
      assert.ok(existsSync(dir));
      const files = readdirSync(dir);
      assert.equal(files.length, 1);
      assert.match(files[0], /\.eml$/);
      const msg = parseMail(readFileSync(join(dir, files[0]), 'utf8'), [watcher.user.email]);
      assert.equal(msg.headers.get('to'), watcher.user.email);
      assert.equal(msg.headers.get('subject'), `${project.name} | Stored (#1)`);
      assert.equal(msg.headers.get('x-gitlab-project-id'), String(project.id));
    } finally {
      await plain.close();
    }
  });
});
