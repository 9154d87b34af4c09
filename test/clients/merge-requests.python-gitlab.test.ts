import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { commitFiles, makeMergeRequest, makeProject, makeUser } from '../support/fixtures.ts';
import { repoFor } from '../../src/resources/repository/repository.common.ts';
import { pythonGitlab, pythonServer, pythonSkip } from '../support/python-gitlab.ts';

// python-gitlab (3.12) merging and rebasing merge requests as its users call them: mr.rebase(), mr.merge() with its
// parameters, and the errors it raises for a conflict and a stale sha.

const server = pythonServer();
let token = '';
before(async () => {
  if (pythonSkip) return;
  await server.ready();
  token = (await makeUser(server.t.app, { username: 'mergeadmin', admin: true })).token;
});

const py = (script: string) => pythonGitlab(server.url, token, script);

test('python-gitlab: mr.rebase(), mr.merge() with squash and branch removal, a conflict and a stale sha', { skip: pythonSkip }, async () => {
  const project = await makeProject(server.t.app, { visibility: 0, repository: true });
  const base = await commitFiles(server.t.app, project, 'main', { 'README.md': 'hello\n' });
  const head = await commitFiles(server.t.app, project, 'topic', { 'topic.txt': 'topic\n' }, { from: 'main' });
  await commitFiles(server.t.app, project, 'clash', { 'README.md': 'clash\n' }, { from: 'main' });
  const mr = await makeMergeRequest(server.t.app, token, project, { source_branch: 'topic', target_branch: 'main', title: 'Topic' });
  const bad = await makeMergeRequest(server.t.app, token, project, { source_branch: 'clash', target_branch: 'main', title: 'Clash' });
  const moved = await commitFiles(server.t.app, project, 'main', { 'README.md': 'hello, world\n' });
  server.t.app.caches.voidAll();
  const first = await py(`
p = gl.projects.get(${project.id})
mr = p.mergerequests.get(${mr.iid}, include_rebase_in_progress=True)
out["before"] = [mr.detailed_merge_status, mr.merge_status, mr.has_conflicts, mr.rebase_in_progress]
out["rebase"] = mr.rebase()
bad = p.mergerequests.get(${bad.iid})
out["bad"] = [bad.detailed_merge_status, bad.has_conflicts]
out["conflict"] = attempt(lambda: bad.merge())
out["stale"] = attempt(lambda: mr.merge(sha="${base}"))
`);
  assert.deepEqual(first, {
    before: ['mergeable', 'can_be_merged', false, false],
    rebase: { rebase_in_progress: true },
    bad: ['conflict', true],
    conflict: [422, 'Branch cannot be merged'],
    stale: [409, `SHA does not match HEAD of source branch: ${head}`],
  });
  await server.t.app.jobs.drain();
  const rebased = await repoFor(server.t.app.config, project).resolveCommit('refs/heads/topic');
  assert.notEqual(rebased, head);
  server.t.app.caches.voidAll();
  const second = await py(`
p = gl.projects.get(${project.id})
mr = p.mergerequests.get(${mr.iid})
out["sha"] = mr.sha
mr.merge(squash=True, squash_commit_message="Topic, squashed", should_remove_source_branch=True, sha=mr.sha)
out["merged"] = [mr.state, mr.squash_commit_sha is not None, mr.merge_commit_sha is not None, mr.merged_by["username"]]
out["again"] = attempt(lambda: mr.merge())
out["branches"] = sorted(b.name for b in p.branches.list())
`);
  assert.deepEqual(second, {
    sha: rebased,
    merged: ['merged', true, true, 'mergeadmin'],
    again: [405, '405 Method Not Allowed'],
    branches: ['clash', 'main'],
  });
  const repo = repoFor(server.t.app.config, project);
  const main = (await repo.resolveCommit('refs/heads/main'))!;
  const parents = (await repo.git(['rev-list', '--parents', '-n', '1', main])).stdout.toString().trim().split(' ');
  assert.equal(parents[1], moved);
  assert.equal((await repo.git(['log', '-1', '--format=%B', parents[2]])).stdout.toString().trim(), 'Topic, squashed');
});
