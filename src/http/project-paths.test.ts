import { test } from 'node:test';
import assert from 'node:assert/strict';
import { projectPathFolder, projectPathRoute } from './project-paths.ts';

// The fold before routing: a path below a project's full path (2 to 21 segments) reaches the one route of its suffix.

const fold = projectPathFolder(['/info/refs', '/git-upload-pack', '/uploads/:secret/:filename', '/alerts/notify/:name/:endpoint']);
const at = (url: string) => fold({ url });

test('the project path becomes one parameter behind the fixed prefix; the query is kept', () => {
  assert.equal(projectPathRoute('/info/refs'), '/-/project/:project_path/info/refs');
  assert.equal(at('/group/project.git/info/refs?service=git-upload-pack'), '/-/project/group%2Fproject.git/info/refs?service=git-upload-pack');
  assert.equal(at('/a/b/c/project/uploads/0123abc/file%20name.png'), '/-/project/a%2Fb%2Fc%2Fproject/uploads/0123abc/file%20name.png');
  assert.equal(at('/a/b/alerts/notify/my-hook/abc.json'), '/-/project/a%2Fb/alerts/notify/my-hook/abc.json');
});

test('repeated and trailing slashes are read as the router reads them', () => {
  assert.equal(at('//group//project.git/info/refs/?x=1'), '/-/project/group%2Fproject.git/info/refs?x=1');
});

test('only 2 to 21 segments before the suffix are folded', () => {
  const segments = (n: number) => Array.from({ length: n }, (_, i) => `g${i}`).join('/');
  assert.equal(at(`/${segments(21)}/info/refs`), `/-/project/${segments(21).replaceAll('/', '%2F')}/info/refs`);
  assert.equal(at(`/${segments(22)}/info/refs`), `/${segments(22)}/info/refs`);
  assert.equal(at('/project.git/info/refs'), '/project.git/info/refs');
});

test('where two suffixes fit, the one after fewer segments wins', () => {
  assert.equal(at('/group/project/uploads/info/refs'), '/-/project/group%2Fproject/uploads/info/refs');
});

test('API paths and paths without a suffix are left alone', () => {
  for (const url of ['/api/v4/projects/1/repository/branches/git-upload-pack', '//api/v4/projects/1/repository/branches/git-upload-pack', '/api/v4/projects/1', '/-/readiness', '/group/project/-/issues', '/a/b/info/refsx', '/a/b/uploads/x']) {
    assert.equal(at(url), url);
  }
});
