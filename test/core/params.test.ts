import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { compileInput, parseDateTime, parseIdOrPath } from '../../src/http/params.ts';
import { parseQuery } from '../../src/http/plumbing.ts';
import { Bool, DateTime, Enum, Input, Int, IntEnum, Opt, PaginationParams, Str } from '../../src/http/schemas.ts';
import { MissingParamError, ParamError } from '../../src/platform/errors.ts';
import { renderDomainError } from '../../src/http/errors.ts';

// Parameter shapes as clients send them: arrays, hashes, arrays of hashes, datetimes, ids or paths.

const schema = Input({
  title: Str(),
  labels: Opt(Type.Array(Str())),
  ids: Opt(Type.Array(Int())),
  attrs: Opt(Type.Record(Type.String(), Type.String())),
  actions: Opt(Type.Array(Type.Object({ action: Enum(['create', 'delete'] as const), file_path: Str() }))),
  confidential: Opt(Bool()),
  access_level: Opt(IntEnum([10, 20, 30])),
  due: Opt(DateTime()),
  ...PaginationParams,
});
const validate = compileInput(schema);
const bodyOf = (err: unknown) => renderDomainError(err as ParamError).body;

test('name[]=v arrays, name[key]=v hashes and name[0][key]=v arrays of hashes from a query or form string', () => {
  const q = parseQuery('title=t&labels[]=bug&labels[]=ui&ids[]=3&ids[]=4&attrs[color]=red&attrs[size]=xl'
    + '&actions[0][action]=create&actions[0][file_path]=a.txt&actions[1][action]=delete&actions[1][file_path]=b%2Fc.txt&confidential=true&access_level=20');
  const input = validate(q);
  assert.deepEqual(input.labels, ['bug', 'ui']);
  assert.deepEqual(input.ids, [3, 4]);
  assert.deepEqual(input.attrs, { color: 'red', size: 'xl' });
  assert.deepEqual(input.actions, [{ action: 'create', file_path: 'a.txt' }, { action: 'delete', file_path: 'b/c.txt' }]);
  assert.equal(input.confidential, true);
  assert.equal(input.access_level, 20);
  assert.equal(input.page, 1);
  assert.equal(input.per_page, 20);
});

test('the same parameters as JSON, and a scalar where an array is declared', () => {
  const input = validate({ title: 't', labels: 'bug', ids: [1, '2'], actions: [{ action: 'create', file_path: 'x' }], confidential: false });
  assert.deepEqual(input.labels, ['bug']);
  assert.deepEqual(input.ids, [1, 2]);
  assert.equal(input.confidential, false);
});

test('repeated keys without brackets: the last one wins', () => {
  assert.deepEqual(parseQuery('a=1&a=2'), { a: '2' });
});

test('nested problems are named as clients send them', () => {
  assert.throws(() => validate({ title: 't', actions: [{ action: 'move', file_path: 'x' }] }), (e) => {
    assert.deepEqual(bodyOf(e), { error: 'actions[0][action] does not have a valid value' });
    return true;
  });
  assert.throws(() => validate({ title: 't', actions: [{ action: 'create' }] }), (e) => {
    assert.deepEqual(bodyOf(e), { error: 'actions[0][file_path] is missing' });
    return true;
  });
  assert.throws(() => validate({ title: 't', access_level: 25, ids: ['x'] }), (e) => {
    assert.deepEqual(bodyOf(e), { error: 'ids[0] is invalid, access_level does not have a valid value' });
    return true;
  });
});

test('a missing required parameter is reported alone, in the spec wording', () => {
  assert.throws(() => validate({ per_page: 'abc' }), (e) => {
    assert.ok(e instanceof MissingParamError);
    assert.deepEqual(renderDomainError(e).body, { message: '400 (Bad request) "title" not given' });
    return true;
  });
});

test('the feature-flag user-list style puts parameter errors under "message"', () => {
  assert.deepEqual(renderDomainError(new MissingParamError('name'), 'message').body, { message: 'name is missing' });
  assert.deepEqual(renderDomainError(ParamError.of('per_page', 'invalid'), 'message').body, { message: 'per_page is invalid' });
});

test('ISO 8601 datetimes: with Z, with offsets (sent as %2B), without offset (UTC), and dates', () => {
  assert.equal(parseDateTime('2026-03-01T10:00:00Z'), Date.parse('2026-03-01T10:00:00Z'));
  assert.equal(parseDateTime('2026-03-01T10:00:00+02:00'), Date.parse('2026-03-01T08:00:00Z'));
  assert.equal(parseDateTime('2026-03-01T10:00:00-0130'), Date.parse('2026-03-01T11:30:00Z'));
  assert.equal(parseDateTime('2026-03-01T10:00:00.123Z'), Date.parse('2026-03-01T10:00:00.123Z'));
  assert.equal(parseDateTime('2026-03-01T10:00'), Date.parse('2026-03-01T10:00:00Z'));
  assert.equal(parseDateTime('2026-03-01'), Date.parse('2026-03-01T00:00:00Z'));
  const q = parseQuery('title=t&due=2026-03-01T10:00:00%2B02:00');
  assert.equal(validate(q).due, '2026-03-01T10:00:00+02:00');
  // An unencoded "+" arrives as a space, which is not an offset.
  assert.equal(parseDateTime(String(parseQuery('d=2026-03-01T10:00:00+02:00').d)), null);
  for (const bad of ['2026-02-30', '2026-13-01', 'yesterday', '2026-03-01T25:00:00Z', '']) assert.equal(parseDateTime(bad), null, bad);
});

test(':id is an integer id or a URL-encoded path', () => {
  assert.deepEqual(parseIdOrPath('42'), { id: 42 });
  assert.deepEqual(parseIdOrPath('group/sub/project'), { path: 'group/sub/project' });
  assert.deepEqual(parseIdOrPath('my-group'), { path: 'my-group' });
});
