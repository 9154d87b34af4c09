// Domain errors: services throw these; only src/http/errors knows how each one looks on the wire.

export abstract class DomainError extends Error {}

/** A resource that does not exist or that the caller may not see ("404 <Thing> Not Found"). */
export class NotFoundError extends DomainError {
  constructor(readonly thing?: string) {
    super(thing ? `${thing} not found` : 'not found');
  }
}

/** A record looked up by id or iid that does not exist ("404 Not found", the reference's record lookup text). */
export class RecordNotFoundError extends DomainError {
  constructor() {
    super('record not found');
  }
}

/** Attribute validation failed: property -> messages (nested objects for embedded entities). */
export class ValidationError extends DomainError {
  constructor(readonly errors: Record<string, unknown>) {
    super('validation failed');
  }
}

/** A declared parameter is absent (spec rule 2). */
export class MissingParamError extends DomainError {
  constructor(readonly param: string) {
    super(`${param} not given`);
  }
}

/**
 * The last four name several parameters at once (`param` is then "a, b, c"), as the reference's
 * `at_least_one_of`, `mutually_exclusive`, `exactly_one_of` and `all_or_none_of` rules.
 */
export type ParamProblem = 'invalid' | 'value' | 'not_allowed' | 'missing' | 'empty'
  | 'at_least_one' | 'mutually_exclusive' | 'exactly_one' | 'all_or_none';

/** Declared-parameter type or value problems, reported as the reference's "<param> is invalid" family. */
export class ParamError extends DomainError {
  constructor(readonly problems: Array<{ param: string; problem: ParamProblem }>) {
    super('parameter error');
  }
  static of(param: string, problem: ParamProblem) {
    return new ParamError([{ param, problem }]);
  }
  /** A rule over several parameters, e.g. `ParamError.group(['password', 'reset_password'], 'at_least_one')`. */
  static group(params: string[], problem: ParamProblem) {
    return new ParamError([{ param: params.join(', '), problem }]);
  }
}

export type RuleKind = 'bad_request' | 'forbidden' | 'not_found' | 'not_allowed' | 'conflict' | 'unprocessable' | 'gone';

/**
 * A business rule refused the request with a sentence the user reads as is
 * (e.g. "Branch already exists"). `kind` says which family of status it belongs to.
 */
export class RuleError extends DomainError {
  constructor(readonly kind: RuleKind, readonly text: string | string[] | Record<string, unknown>) {
    super(typeof text === 'string' ? text : JSON.stringify(text));
  }
}

/**
 * A cherry-pick or revert that does not apply (`conflict`) or changes nothing (`empty`): the sentence, the
 * reference's error code, and whether the caller only asked (`dry_run`).
 */
export class CommitChangeError extends DomainError {
  constructor(readonly text: string, readonly code: 'conflict' | 'empty', readonly dryRun: boolean) {
    super(text);
  }
}

export class BadRequestError extends DomainError {
  constructor(readonly reason?: string) {
    super(reason ?? 'bad request');
  }
}

export class ForbiddenError extends DomainError {
  constructor(readonly reason?: string) {
    super(reason ?? 'forbidden');
  }
}

export class UnauthorizedError extends DomainError {
  constructor(readonly reason?: string) {
    super(reason ?? 'unauthorized');
  }
}

export class ConflictError extends DomainError {
  constructor(readonly text?: string) {
    super(text ?? 'conflict');
  }
}

export class PreconditionFailedError extends DomainError {
  constructor() {
    super('precondition failed');
  }
}

export type TokenProblem = 'expired' | 'revoked' | 'impersonation_disabled';

export class InvalidTokenError extends DomainError {
  constructor(readonly problem: TokenProblem) {
    super(problem);
  }
}

export class InsufficientScopeError extends DomainError {
  constructor(readonly scopes: string[]) {
    super('insufficient scope');
  }
}

export type OAuthErrorCode =
  | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type'
  | 'invalid_scope' | 'unsupported_response_type' | 'unsupported_response_mode' | 'access_denied'
  | 'invalid_redirect_uri' | 'invalid_token' | 'insufficient_scope';

/** Which OAuth endpoint answers: each has its own status and header conventions. */
export type OAuthSurface = 'token' | 'revoke' | 'info' | 'userinfo' | 'authorize';

/**
 * An OAuth 2.0 protocol error. `missing` names an absent parameter; `reason` picks a more precise
 * description (e.g. 'multiple_auth', 'challenge_method', 'expired', 'revoked').
 */
export class OAuthError extends DomainError {
  constructor(
    readonly code: OAuthErrorCode,
    readonly opts: { missing?: string; reason?: string; surface?: OAuthSurface } = {},
  ) {
    super(code);
  }
  on(surface: OAuthSurface): OAuthError {
    return new OAuthError(this.code, { ...this.opts, surface });
  }
}

/** A project was reached through an old path (a redirect route); the answer points at its id. */
export class ProjectMovedError extends DomainError {
  constructor(readonly projectId: number) {
    super('project moved');
  }
}

/**
 * Content a spam check flagged (platform/spam): `entity` names the record ("issue", "merge request", "comment",
 * "snippet"); with `captcha` the request may be repeated once with a solved CAPTCHA and the spam log's id.
 */
export class SpamError extends DomainError {
  constructor(readonly entity: string, readonly captcha: { spamLogId: number; siteKey: string } | null) {
    super(`${entity} recognized as spam`);
  }
}
