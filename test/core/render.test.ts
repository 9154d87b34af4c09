import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BadRequestError, ConflictError, ForbiddenError, InsufficientScopeError, InvalidTokenError, NotFoundError, ParamError,
  PreconditionFailedError, RecordNotFoundError, RuleError, UnauthorizedError, ValidationError,
} from '../../src/platform/errors.ts';
import {
  accepted, keysetUnavailable, methodNotAllowed, movedNonGet, movedPermanently, offsetLimitExceeded, queryTooLong,
  renderDomainError, routeNotFound, tooManyRequests,
} from '../../src/http/errors.ts';

// The wire shape of every domain error and every fixed answer, in one table.

test('domain errors render to the reference bodies', () => {
  const cases: Array<[Error, number, unknown]> = [
    [new NotFoundError('Project'), 404, { message: '404 Project Not Found' }],
    [new NotFoundError(), 404, { message: '404 Not Found' }],
    [new RecordNotFoundError(), 404, { message: '404 Not found' }],
    [new ValidationError({ name: ['has already been taken'], route: { path: ['is invalid'] } }), 400, { message: { name: ['has already been taken'], route: { path: ['is invalid'] } } }],
    [ParamError.group(['a', 'b'], 'mutually_exclusive'), 400, { error: 'a, b are mutually exclusive' }],
    [ParamError.group(['a', 'b'], 'exactly_one'), 400, { error: 'a, b are missing, exactly one parameter must be provided' }],
    [ParamError.group(['a', 'b'], 'all_or_none'), 400, { error: 'a, b provide all or none of parameters' }],
    [ParamError.of('name', 'empty'), 400, { error: 'name is empty' }],
    [new RuleError('unprocessable', 'Failed to remove image'), 422, { message: 'Failed to remove image' }],
    [new RuleError('conflict', ['Name has already been taken']), 409, { message: ['Name has already been taken'] }],
    [new RuleError('bad_request', { error: 'spam' }), 400, { message: { error: 'spam' } }],
    [new RuleError('gone', 'gone'), 410, { message: 'gone' }],
    [new BadRequestError('Branch name is invalid'), 400, { message: '400 Bad request - Branch name is invalid' }],
    [new BadRequestError(), 400, { message: '400 Bad request' }],
    [new ForbiddenError(), 403, { message: '403 Forbidden' }],
    [new UnauthorizedError(), 401, { message: '401 Unauthorized' }],
    [new ConflictError(), 409, { message: '409 Conflict' }],
    [new ConflictError('Email has already been taken'), 409, { message: 'Email has already been taken' }],
    [new PreconditionFailedError(), 412, { message: '412 Precondition Failed' }],
    [new InsufficientScopeError(['api', 'read_api']), 403, { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api read_api' }],
  ];
  for (const [err, status, body] of cases) {
    const r = renderDomainError(err as any);
    assert.deepEqual([r.status, r.body], [status, body], err.constructor.name);
  }
  const tok = renderDomainError(new InvalidTokenError('revoked'));
  assert.equal(tok.headers?.['www-authenticate'], 'Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="Token was revoked. You have to re-authorize from the user."');
});

test('fixed answers', () => {
  assert.deepEqual(routeNotFound, { status: 404, body: { error: '404 Not Found' } });
  assert.deepEqual(methodNotAllowed(['OPTIONS', 'GET']), { status: 405, body: { error: '405 Not Allowed' }, headers: { allow: 'OPTIONS, GET' } });
  assert.deepEqual(offsetLimitExceeded('Project', 50000).body, { error: 'Offset pagination has a maximum allowed offset of 50000 for requests that return objects of type Project. Remaining records can be retrieved using keyset pagination.' });
  assert.deepEqual(keysetUnavailable, { status: 405, body: { error: 'Keyset pagination is not yet available for this type of request' } });
  assert.deepEqual(queryTooLong, { status: 414, body: { message: '414 Request-URI Too Large' } });
  assert.deepEqual(movedPermanently('http://x/api/v4/projects/1'), { status: 301, body: 'This resource has been moved permanently to http://x/api/v4/projects/1', headers: { location: 'http://x/api/v4/projects/1' }, contentType: 'text/plain; charset=utf-8' });
  assert.deepEqual(movedNonGet.body, { message: 'Non GET methods are not allowed for moved projects' });
  assert.deepEqual(tooManyRequests({ 'retry-after': '5' }), { status: 429, body: 'Retry later\n', headers: { 'retry-after': '5' }, contentType: 'text/plain; charset=utf-8' });
  assert.deepEqual(accepted, { status: 202, body: { message: '202 Accepted' } });
});
