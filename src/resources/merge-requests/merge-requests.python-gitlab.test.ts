import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, commitFiles, makeIssue, makeProject, quickUser, Role } from '../../../test/support/fixtures.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../../../test/support/python-gitlab.ts';

// python-gitlab, the real client, driving merge requests: create, list, get, save, notes, approve and unapprove,
// commits, participants, closes_issues, subscribe, time tracking and delete.

const server = pythonServer();

const SCRIPT = String.raw`
reviewer = gitlab.Gitlab(os.environ['GL_URL'], private_token=os.environ['REVIEWER'])
project = gl.projects.get(int(os.environ['PROJECT']))
mr = project.mergerequests.create({'source_branch': 'feature', 'target_branch': 'main', 'title': 'Draft: From python',
                                   'description': 'Closes #' + os.environ['ISSUE'], 'labels': ['bug']})
out['created'] = {'iid': mr.iid, 'draft': mr.draft, 'labels': mr.labels, 'sha': mr.sha, 'diff_refs': mr.diff_refs}
out['listed'] = [m.title for m in project.mergerequests.list(state='opened', get_all=True)]
out['wip'] = [m.iid for m in project.mergerequests.list(wip='yes')]
got = project.mergerequests.get(mr.iid)
got.title = 'From python'
got.save()
out['saved'] = project.mergerequests.get(mr.iid).draft
note = got.notes.create({'body': 'A note'})
out['notes'] = [n.body for n in got.notes.list(get_all=True) if not n.system]
out['commits'] = [c.title for c in got.commits()]
out['closes'] = [i.iid for i in got.closes_issues()]
out['participants'] = [u['username'] for u in got.participants()]
theirs = reviewer.projects.get(int(os.environ['PROJECT']), lazy=True).mergerequests.get(mr.iid)
theirs.approve(sha=mr.sha)
out['approvals'] = [a['user']['username'] for a in got.approvals.get().approved_by]
try:
    theirs.approve(sha='0' * 40)
    out['stale_sha'] = 'accepted'
except gitlab.exceptions.GitlabAuthenticationError as e:
    out['stale_sha'] = e.response_code
except gitlab.exceptions.GitlabMRApprovalError as e:
    out['stale_sha'] = e.response_code
theirs.unapprove()
out['approved_after'] = [a['user']['username'] for a in got.approvals.get().approved_by]
got.time_estimate('2h')
out['time'] = project.mergerequests.get(mr.iid).time_stats()['time_estimate']
got.state_event = 'close'
got.save()
out['closed'] = project.mergerequests.get(mr.iid).state
got.delete()
try:
    project.mergerequests.get(mr.iid)
    out['after_delete'] = 'still there'
except gitlab.exceptions.GitlabGetError as e:
    out['after_delete'] = e.response_code
`;

test('python-gitlab drives project merge requests', { skip: pythonSkip }, async () => {
  const owner = await quickUser(server.t.app);
  const reviewer = await quickUser(server.t.app);
  const project = await makeProject(server.t.app, { visibility: 0, repository: true });
  await addMember(server.t.app, { type: 'Project', id: project.id }, owner.user.id, Role.owner);
  await addMember(server.t.app, { type: 'Project', id: project.id }, reviewer.user.id, Role.developer);
  const base_ = await commitFiles(server.t.app, project, 'main', { 'README.md': 'hi\n' });
  const head = await commitFiles(server.t.app, project, 'feature', { 'f.txt': 'f\n' }, { from: 'main', message: 'Add f' });
  const issue = await makeIssue(server.t.app, project, { title: 'To close' });
  const out = await pythonGitlab(server.url, owner.token, SCRIPT, { env: { REVIEWER: reviewer.token, PROJECT: String(project.id), ISSUE: String(issue.iid) } });
  assert.deepEqual(out.created, { iid: 1, draft: true, labels: ['bug'], sha: head, diff_refs: { base_sha: base_, head_sha: head, start_sha: base_ } });
  assert.deepEqual(out.listed, ['Draft: From python']);
  assert.deepEqual(out.wip, [1]);
  assert.equal(out.saved, false);
  assert.deepEqual(out.notes, ['A note']);
  assert.deepEqual(out.commits, ['Add f']);
  assert.deepEqual(out.closes, [issue.iid]);
  assert.deepEqual(out.participants, [owner.user.username]);
  assert.deepEqual(out.approvals, [reviewer.user.username]);
  assert.equal(out.stale_sha, 409);
  assert.deepEqual(out.approved_after, []);
  assert.equal(out.time, 7200);
  assert.equal(out.closed, 'closed');
  assert.equal(out.after_delete, 404);
});
