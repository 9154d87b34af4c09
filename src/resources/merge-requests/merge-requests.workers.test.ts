import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callServer, scratch, startServer } from '../../../test/core/processes.ts';

// Merge requests created at the same time through both workers of one server (one database, one repository): every
// creation answers 201 with its own iid (a writer waits for the other's transaction, it never fails), a second
// creation for the same branches answers 409, and each created merge request reads back as its creation answered,
// its mergeability (`checking` in the creation's answer) then checked.

const ROOT = 'glpat-mr-workers-root-token-012345';

const call = (url: string, method: string, body?: unknown) => callServer(url, method, ROOT, body);

test('concurrent merge request creations on two workers: each 201 or the 409 of a duplicate, never a 500', async () => {
  const sc = await scratch();
  const server = await startServer({ ...sc.env, BELLOWS_ROOT_TOKEN: ROOT, BELLOWS_WORKERS: '2' });
  try {
    const api = `${server.url}/api/v4`;
    const project = await call(`${api}/projects`, 'POST', { name: 'concurrent', initialize_with_readme: true });
    assert.equal(project.status, 201);
    const p = `${api}/projects/${project.json.id}`;
    const n = 12;
    for (let i = 0; i < n; i++) {
      const made = await call(`${p}/repository/commits`, 'POST', {
        branch: `topic-${i}`, start_branch: 'main', commit_message: `Topic ${i}`, actions: [{ action: 'create', file_path: `topic-${i}.txt`, content: `${i}\n` }],
      });
      assert.equal(made.status, 201);
    }
    // Every branch once, and topic-0 a second time: one of its two creations answers 409.
    const wanted = [...Array.from({ length: n }, (_, i) => `topic-${i}`), 'topic-0'];
    const answers = await Promise.all(wanted.map((b) => call(`${p}/merge_requests`, 'POST', { source_branch: b, target_branch: 'main', title: `Work ${b}` })));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 201).length, n, JSON.stringify(answers.filter((a) => a.status !== 201)));
    const refused = answers.filter((a) => a.status !== 201);
    assert.deepEqual(refused.map((a) => a.status), [409]);
    const created = answers.filter((a) => a.status === 201).map((a) => a.json);
    const duplicate = created.find((m) => m.source_branch === 'topic-0')!;
    assert.deepEqual(refused[0].json, { message: [`Another open merge request already exists for this source branch: !${duplicate.iid}`] });
    assert.deepEqual(created.map((m) => m.iid).sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i + 1));
    for (const m of created) {
      assert.deepEqual([m.merge_status, m.detailed_merge_status, m.has_conflicts, m.changes_count], ['checking', 'checking', false, '1']);
      assert.equal(m.diff_refs.head_sha, m.sha);
      const read = await call(`${p}/merge_requests/${m.iid}`, 'GET');
      assert.equal(read.status, 200);
      assert.deepEqual(read.json, { ...m, merge_status: 'can_be_merged', detailed_merge_status: 'mergeable' });
      const commits = await call(`${p}/merge_requests/${m.iid}/commits`, 'GET');
      assert.deepEqual(commits.json.map((c: { id: string }) => c.id), [m.sha]);
    }
  } finally {
    await server.stop();
    await sc.cleanup();
  }
});
