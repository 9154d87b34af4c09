// Merge request benchmarks, in one process on a fresh in-memory database (no HTTP load generator: the figures are the
// service and git costs themselves):
//   - the mergeability answer for a source 1,000 commits ahead, cold (git merge-tree, then the pair row written), the
//     same with the divergence counts (`include_diverged_commits_count`, a walk beside the merge) and warm (the
//     process memo), beside plain git merge-tree alone; wall time and CPU time (this process and its git children);
//   - merges per second through PUT .../merge (each a real merge commit moved onto the target by compare-and-swap,
//     the row, the state event), one after another and in parallel over several projects, beside plain git
//     (merge-tree, commit-tree, update-ref) done the same way as the ceiling.
//   node --import tsx bench/merge.ts            (prints a table row per benchmark, for bench/MERGE-RESULTS.md)
//   MERGES=40 PROJECTS=4 change the counts.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { buildTestApp, call } from '../test/support/app.ts';
import { castRoles, commitFiles, makeMergeRequest, makeProject } from '../test/support/fixtures.ts';
import { repoFor } from '../src/resources/repository/repository.common.ts';
import { checkPair } from '../src/resources/merge-requests/mergeability.ts';

const AHEAD = 1_000;
const MERGES = Number(process.env.MERGES ?? 40);
const PROJECTS = Number(process.env.PROJECTS ?? 4);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/** CPU time of this process and of its children it waited for (git), in ms; /proc/self/stat counts in ticks of 10 ms. */
const cpuMs = () => {
  const f = readFileSync('/proc/self/stat', 'utf8').slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
};

const load0 = loadavg()[0];
const t = await buildTestApp();
const project = await makeProject(t.app, { visibility: 0, repository: true });
const roles = await castRoles(t.app, project);
const repo = repoFor(t.app.config, project);
const base = await commitFiles(t.app, project, 'main', { 'README.md': 'hello\n' });

// 1,000 commits on `long` by fast-import, each changing its own file.
let stream = `reset refs/heads/long\nfrom ${base}\n\n`;
for (let i = 0; i < AHEAD; i++) {
  const body = `change ${i}\n`;
  stream += `commit refs/heads/long\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\ndata 9\ncommit ${String(i).padStart(1, '0').slice(0, 1)}\n`;
  stream += `M 100644 inline files/f${i}.txt\ndata ${Buffer.byteLength(body)}\n${body}\n`;
}
await repo.git(['fast-import', '--quiet'], { input: stream, timeoutMs: 600_000 });
repo.invalidate();
// The target moves on too, so the merge is a real three-way merge.
await commitFiles(t.app, project, 'main', { 'other.txt': 'other\n' });
const mr = await makeMergeRequest(t.app, roles.owner.token, project, { source_branch: 'long', target_branch: 'main', title: 'Long' });
const target = (await repo.resolveCommit('refs/heads/main'))!;
const source = (await repo.resolveCommit('refs/heads/long'))!;

// Cold: a target head of its own each round (one more commit on a side branch), so neither the memo nor the
// table has the pair.
const cold: number[] = [];
const coldCounts: number[] = [];
let coldCpu = 0;
let coldCountsCpu = 0;
for (let i = 0; i < 15; i++) {
  const side = await commitFiles(t.app, project, `side${i}`, { [`side/${i}.txt`]: `${i}\n` }, { from: 'main' });
  const sideCounts = await commitFiles(t.app, project, `sidec${i}`, { [`side/c${i}.txt`]: `${i}\n` }, { from: 'main' });
  let cpu = cpuMs();
  let at = performance.now();
  await checkPair(t.app, project.id, repo, side, source);
  cold.push(performance.now() - at);
  coldCpu += cpuMs() - cpu;
  cpu = cpuMs();
  at = performance.now();
  await checkPair(t.app, project.id, repo, sideCounts, source, { counts: true });
  coldCounts.push(performance.now() - at);
  coldCountsCpu += cpuMs() - cpu;
}
const warm: number[] = [];
for (let i = 0; i < 200; i++) {
  const at = performance.now();
  await checkPair(t.app, project.id, repo, target, source);
  warm.push(performance.now() - at);
}
const plain: number[] = [];
let plainCpu = 0;
for (let i = 0; i < 15; i++) {
  const cpu = cpuMs();
  const at = performance.now();
  await repo.git(['merge-tree', '--write-tree', target, source]);
  plain.push(performance.now() - at);
  plainCpu += cpuMs() - cpu;
}
const got = await call(t.app, 'GET', `/projects/${project.id}/merge_requests/${mr.iid}`, { token: roles.owner.token, query: { include_diverged_commits_count: 'true' } });
if (got.body.detailed_merge_status !== 'mergeable' || got.body.diverged_commits_count !== 1) throw new Error(JSON.stringify(got.body));

// Merges: one merge request per branch, each one commit ahead of where main was when it was made.
const iids: number[] = [];
for (let i = 0; i < MERGES; i++) {
  await commitFiles(t.app, project, `m${i}`, { [`m/${i}.txt`]: `${i}\n` }, { from: 'main' });
  iids.push((await makeMergeRequest(t.app, roles.owner.token, project, { source_branch: `m${i}`, target_branch: 'main', title: `M${i}` })).iid);
}
let at = performance.now();
for (const iid of iids) {
  const r = await call(t.app, 'PUT', `/projects/${project.id}/merge_requests/${iid}/merge`, { token: roles.owner.token });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
}
const mergeRate = MERGES / ((performance.now() - at) / 1000);
// The ceiling: the same merges by plain git on the same repository.
const heads = [];
for (let i = 0; i < MERGES; i++) heads.push(await commitFiles(t.app, project, `p${i}`, { [`p/${i}.txt`]: `${i}\n` }, { from: 'main' }));
at = performance.now();
for (const h of heads) {
  const cur = (await repo.revParse('refs/heads/main'))!;
  const tree = (await repo.git(['merge-tree', '--write-tree', cur, h])).stdout.toString().trim();
  const c = (await repo.git(['commit-tree', tree, '-p', cur, '-p', h, '-m', 'merge'], { env: { GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@e' } })).stdout.toString().trim();
  await repo.git(['update-ref', 'refs/heads/main', c, cur]);
}
const plainRate = MERGES / ((performance.now() - at) / 1000);

// In parallel: PROJECTS projects, each merging its own merge requests one after another, all projects at once
// (what a server with two workers sees from several teams), then plain git the same way.
const each = Math.max(1, Math.round(MERGES / PROJECTS));
const fleet = [];
for (let k = 0; k < PROJECTS; k++) {
  const p = await makeProject(t.app, { visibility: 0, repository: true });
  const token = (await castRoles(t.app, p)).owner.token;
  await commitFiles(t.app, p, 'main', { 'README.md': `project ${k}\n` });
  const list: number[] = [];
  for (let i = 0; i < each; i++) {
    await commitFiles(t.app, p, `m${i}`, { [`m/${i}.txt`]: `${i}\n` }, { from: 'main' });
    list.push((await makeMergeRequest(t.app, token, p, { source_branch: `m${i}`, target_branch: 'main', title: `M${i}` })).iid);
  }
  const plainHeads = [];
  for (let i = 0; i < each; i++) plainHeads.push(await commitFiles(t.app, p, `p${i}`, { [`p/${i}.txt`]: `${i}\n` }, { from: 'main' }));
  fleet.push({ p, token, list, plainHeads, repo: repoFor(t.app.config, p) });
}
at = performance.now();
await Promise.all(fleet.map(async ({ p, token, list }) => {
  for (const iid of list) {
    const r = await call(t.app, 'PUT', `/projects/${p.id}/merge_requests/${iid}/merge`, { token });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  }
}));
const parallelRate = (each * PROJECTS) / ((performance.now() - at) / 1000);
at = performance.now();
await Promise.all(fleet.map(async ({ repo: r, plainHeads }) => {
  for (const h of plainHeads) {
    const cur = (await r.revParse('refs/heads/main'))!;
    const tree = (await r.git(['merge-tree', '--write-tree', cur, h])).stdout.toString().trim();
    const c = (await r.git(['commit-tree', tree, '-p', cur, '-p', h, '-m', 'merge'], { env: { GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@e' } })).stdout.toString().trim();
    await r.git(['update-ref', 'refs/heads/main', c, cur]);
  }
}));
const parallelPlainRate = (each * PROJECTS) / ((performance.now() - at) / 1000);
// The repository facts the merges queued (statistics, languages) are read after the answers; run them to be sure they work.
await t.app.jobs.drain();
await t.close();

const f = (x: number) => x.toFixed(1);
console.log(`load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`);
console.log(`| mergeability, source ${AHEAD} commits ahead, cold (median of ${cold.length}) | ${f(median(cold))} ms (CPU ${f(coldCpu / cold.length)} ms) | ${f(median(plain))} ms (CPU ${f(plainCpu / plain.length)} ms) (git merge-tree alone) | < 50 ms |`);
console.log(`| the same with diverged_commits_count (median of ${coldCounts.length}) | ${f(median(coldCounts))} ms (CPU ${f(coldCountsCpu / coldCounts.length)} ms) | ${f(median(plain))} ms (git merge-tree alone) | — |`);
console.log(`| mergeability, same pair again (memo; median of ${warm.length}) | ${median(warm).toFixed(3)} ms | n/a | — |`);
console.log(`| merges through PUT .../merge, one after another (${MERGES}) | ${mergeRate.toFixed(1)} merges/s | ${plainRate.toFixed(1)} merges/s | ≥ 20/s |`);
console.log(`| merges through PUT .../merge, ${PROJECTS} projects in parallel (${each * PROJECTS}) | ${parallelRate.toFixed(1)} merges/s | ${parallelPlainRate.toFixed(1)} merges/s | ≥ 20/s |`);
