import { STATUS_CODES, validateHeaderValue } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BadRequestError, CommitChangeError, ConflictError, DomainError, ForbiddenError, InsufficientScopeError, InvalidTokenError, MissingParamError,
  NotFoundError, OAuthError, ParamError, PreconditionFailedError, ProjectMovedError, RecordNotFoundError, RuleError, SpamError, UnauthorizedError, ValidationError,
  type ParamProblem, type RuleKind, type TokenProblem,
} from '../platform/errors.ts';

// Every error body of the API is written here, nowhere else.

export interface RenderedError {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  contentType?: string;
}

const TOKEN_TEXT: Record<TokenProblem, string> = {
  expired: 'Token is expired. You can either do re-authorization or token refresh.',
  revoked: 'Token was revoked. You have to re-authorize from the user.',
  impersonation_disabled: 'Token is an impersonation token but impersonation was disabled.',
};

const PARAM_TEXT: Record<ParamProblem, string> = {
  invalid: 'is invalid',
  value: 'does not have a valid value',
  not_allowed: 'has a value not allowed',
  missing: 'is missing',
  empty: 'is empty',
  at_least_one: 'are missing, at least one parameter must be provided',
  mutually_exclusive: 'are mutually exclusive',
  exactly_one: 'are missing, exactly one parameter must be provided',
  all_or_none: 'provide all or none of parameters',
};

const RULE_STATUS: Record<RuleKind, number> = {
  bad_request: 400, forbidden: 403, not_found: 404, not_allowed: 405, conflict: 409, unprocessable: 422, gone: 410,
};

/** The body of an error raised by the API's own rules. `style: 'message'` puts parameter errors under `message`. */
export function renderDomainError(err: DomainError, style: 'grape' | 'message' = 'grape'): RenderedError {
  if (err instanceof OAuthError) return renderOAuthError(err);
  if (err instanceof NotFoundError) return msg(404, err.thing ? `404 ${err.thing} Not Found` : '404 Not Found');
  if (err instanceof RecordNotFoundError) return msg(404, '404 Not found');
  if (err instanceof ValidationError) return { status: 400, body: { message: err.errors } };
  if (err instanceof MissingParamError) {
    return style === 'message' ? msg(400, `${err.param} is missing`) : msg(400, `400 (Bad request) "${err.param}" not given`);
  }
  if (err instanceof ParamError) {
    const text = err.problems.map((p) => `${p.param} ${PARAM_TEXT[p.problem]}`).join(', ');
    return style === 'message' ? msg(400, text) : { status: 400, body: { error: text } };
  }
  if (err instanceof RuleError) return { status: RULE_STATUS[err.kind], body: { message: err.text } };
  if (err instanceof CommitChangeError) {
    return { status: 400, body: { message: err.text, error_code: err.code, ...(err.dryRun ? { dry_run: 'error' } : {}) } };
  }
  if (err instanceof SpamError) return renderSpamError(err);
  if (err instanceof BadRequestError) return msg(400, err.reason ? `400 Bad request - ${err.reason}` : '400 Bad request');
  if (err instanceof ForbiddenError) return msg(403, err.reason ? `403 Forbidden - ${err.reason}` : '403 Forbidden');
  if (err instanceof UnauthorizedError) return msg(401, err.reason ? `401 Unauthorized - ${err.reason}` : '401 Unauthorized');
  if (err instanceof ConflictError) return msg(409, err.text ?? '409 Conflict');
  if (err instanceof PreconditionFailedError) return msg(412, '412 Precondition Failed');
  if (err instanceof InvalidTokenError) {
    const description = TOKEN_TEXT[err.problem];
    return {
      status: 401,
      body: { error: 'invalid_token', error_description: description },
      headers: { 'www-authenticate': `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${description}"` },
    };
  }
  if (err instanceof InsufficientScopeError) {
    return {
      status: 403,
      body: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the access token.',
        scope: err.scopes.join(' '),
      },
    };
  }
  return msg(500, '500 Internal Server Error');
}

/**
 * Spam (spec error rule 10), the reference's REST answers: without a CAPTCHA 400 and the text under `message.error`;
 * with one 409, the CAPTCHA fields and the text asking for it.
 */
function renderSpamError(err: SpamError): RenderedError {
  if (!err.captcha) {
    return { status: 400, body: { message: { error: `Your ${err.entity} has been recognized as spam. Please, change the content to proceed.` } } };
  }
  return {
    status: 409,
    body: {
      needs_captcha_response: true,
      spam_log_id: err.captcha.spamLogId,
      captcha_site_key: err.captcha.siteKey,
      message: { error: `Your ${err.entity} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.` },
    },
  };
}

// OAuth 2.0 endpoints speak RFC 6749/6750 errors with the reference provider's texts.
const OAUTH_TEXT: Record<string, string> = {
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  'invalid_request:multiple_auth': 'The request utilizes more than one mechanism for authenticating the client.',
  'invalid_request:challenge_method': 'The code_challenge_method must be S256.',
  'invalid_request:challenge': 'The code_challenge must be the URL-safe Base64 encoding of a SHA-256 digest (43 characters).',
  invalid_client: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unauthorized_client: 'The client is not authorized to perform this request using this method.',
  'unauthorized_client:revoke': 'You are not authorized to revoke this token',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  unsupported_response_type: 'The authorization server does not support this response type.',
  unsupported_response_mode: 'The authorization server does not support this response mode.',
  access_denied: 'The resource owner or authorization server denied the request.',
  invalid_redirect_uri: "The requested redirect URI is malformed or doesn't match the client redirect URI.",
  invalid_token: 'The access token is invalid',
  'invalid_token:expired': 'The access token expired',
  'invalid_token:revoked': 'The access token was revoked',
  insufficient_scope: 'Access to this resource requires scope "openid", "profile" or "read_user".',
};

/** The error_description of an OAuth error (also used in error redirects and on the error page). */
export function oauthDescription(err: OAuthError): string {
  if (err.code === 'invalid_request' && err.opts.missing) return `Missing required parameter: ${err.opts.missing}.`;
  return OAUTH_TEXT[`${err.code}:${err.opts.reason}`] ?? OAUTH_TEXT[err.code];
}

/** RFC 6750 §3: header values may not carry '"' or '\\'; the reference replaces anything else outside the set with '_'. */
function headerSafe(s: string): string {
  return s.replace(/[^\x20-\x21\x23-\x5B\x5D-\x7E]/g, '_');
}

function bearerChallenge(code: string, description: string): string {
  return `Bearer realm="Doorkeeper", error="${code}", error_description="${headerSafe(description)}"`;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

export function renderOAuthError(err: OAuthError): RenderedError {
  const description = oauthDescription(err);
  const body = { error: err.code, error_description: description };
  switch (err.opts.surface ?? 'token') {
    case 'revoke':
      // Revocation refuses a foreign token with 403 and no challenge; malformed requests are token-endpoint errors.
      if (err.code === 'unauthorized_client') return { status: 403, body, headers: { ...NO_STORE } };
      break;
    case 'info':
      return { status: 401, body: { ...body, state: 'unauthorized' }, headers: { ...NO_STORE, 'www-authenticate': bearerChallenge(err.code, description) } };
    case 'userinfo':
      // Protected-resource errors carry only the challenge header (RFC 6750 §3).
      return {
        status: err.code === 'insufficient_scope' ? 403 : 401,
        body: '',
        headers: { ...NO_STORE, 'www-authenticate': bearerChallenge(err.code, description) },
      };
    default:
      break;
  }
  const status = err.code === 'invalid_client' || err.code === 'unauthorized_client' ? 401 : 400;
  return { status, body, headers: { ...NO_STORE, 'www-authenticate': bearerChallenge(err.code, description) } };
}

function msg(status: number, message: string): RenderedError {
  return { status, body: { message } };
}

export const badRequest: RenderedError = { status: 400, body: { error: '400 Bad Request' } };

export const routeNotFound: RenderedError = { status: 404, body: { error: '404 Not Found' } };

export function methodNotAllowed(allow: string[]): RenderedError {
  return { status: 405, body: { error: '405 Not Allowed' }, headers: { allow: allow.join(', ') } };
}

export function offsetLimitExceeded(type: string, limit: number): RenderedError {
  return {
    status: 405,
    body: { error: `Offset pagination has a maximum allowed offset of ${limit} for requests that return objects of type ${type}. Remaining records can be retrieved using keyset pagination.` },
  };
}

export const keysetUnavailable: RenderedError = { status: 405, body: { error: 'Keyset pagination is not yet available for this type of request' } };

export const queryTooLong: RenderedError = { status: 414, body: { message: '414 Request-URI Too Large' } };

export function movedPermanently(location: string): RenderedError {
  return { status: 301, body: `This resource has been moved permanently to ${location}`, headers: { location }, contentType: 'text/plain; charset=utf-8' };
}

/** The request URL on the external host with the project path segment replaced by the numeric id, query kept. */
export function movedLocation(req: FastifyRequest, projectId: number): string {
  const base = (req.server as any).config?.externalUrl ?? '';
  const q = req.url.indexOf('?');
  const path = q >= 0 ? req.url.slice(0, q) : req.url;
  const query = q >= 0 ? req.url.slice(q) : '';
  return base + path.replace(/(\/projects\/)[^/]+/, `$1${projectId}`) + query;
}

export const movedNonGet: RenderedError = { status: 405, body: { message: 'Non GET methods are not allowed for moved projects' } };

export function tooManyRequests(headers: Record<string, string>): RenderedError {
  return { status: 429, body: 'Retry later\n', headers, contentType: 'text/plain; charset=utf-8' };
}

/** A named endpoint limit reached (the reference's `check_rate_limit!`): its JSON body, with `Retry-After`. */
export function endpointThrottled(headers: Record<string, string>): RenderedError {
  return {
    status: 429, body: { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
    headers: { 'retry-after': headers['retry-after'] },
  };
}

export const serviceUnavailable: RenderedError = { status: 503, body: { message: '503 Service Unavailable' } };

export const accepted: RenderedError = { status: 202, body: { message: '202 Accepted' } };

/** Framework-level failures (body parsing, content types, limits, routing) in the reference's words. */
export function renderFrameworkError(err: any, req: FastifyRequest): RenderedError {
  switch (err?.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { error: `The provided content-type '${String(req.headers['content-type'] ?? '').split(';')[0].trim()}' is not supported.` } };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return msg(413, '413 Request Entity Too Large');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, body: { error: 'The request body is not valid' } };
    case 'BELLOWS_INVALID_MULTIPART':
      return { status: 400, body: { error: 'The request body is not valid' } };
    case 'BELLOWS_INVALID_JSON':
      return { status: 400, body: { error: "\nProblem:\n  message body does not match declared format\nResolution:\n  when specifying application/json as content-type, you must pass valid application/json in the request's 'body' " } };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return queryTooLong;
    default:
      break;
  }
  // Multipart limits (file size, number of parts) are the framework's, in its FST_ codes.
  if (err?.statusCode === 413 && err?.code?.startsWith?.('FST_')) return msg(413, '413 Request Entity Too Large');
  const status = Number(err?.statusCode ?? err?.status);
  if (status === 400) return badRequest;
  // Any other refusal of the request by the framework or a plugin (multipart limits, ...): its status, v4 words.
  if (Number.isInteger(status) && status > 400 && status < 500) return msg(status, `${status} ${STATUS_CODES[status] ?? 'Error'}`);
  return msg(500, '500 Internal Server Error');
}

/**
 * Answers for requests Node refuses before any route runs (malformed request line or headers, headers too large,
 * timeouts), written straight to the socket since there is no reply object yet.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const r = err.code === 'HPE_HEADER_OVERFLOW' ? msg(431, '431 Request Header Fields Too Large')
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? msg(408, '408 Request Timeout')
    : badRequest;
  const body = JSON.stringify(r.body);
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${r.status} ${STATUS_CODES[r.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/**
 * Headers a handler set before failing are not the error's: a file name, a length, a tag. One with a value Node
 * refuses (which may be the failure itself) would fail the error answer too, and the framework would then
 * answer with its own body, so those go as well.
 */
function clearForError(reply: FastifyReply): void {
  for (const name of ['content-disposition', 'content-length', 'etag', 'last-modified']) reply.removeHeader(name);
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    try {
      for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) validateHeaderValue(name, String(v));
    } catch {
      reply.removeHeader(name);
    }
  }
}

export function sendRendered(reply: FastifyReply, r: RenderedError): FastifyReply {
  reply.code(r.status);
  if (r.headers) for (const [k, v] of Object.entries(r.headers)) reply.header(k, v);
  if (r.contentType) reply.type(r.contentType);
  return reply.send(r.body);
}

/** Installs the one error handler of the application: every error, the framework's own included, in v4 shapes. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: any, req: FastifyRequest, reply: FastifyReply) => {
    clearForError(reply);
    if (err instanceof ProjectMovedError) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendRendered(reply, movedNonGet);
      return sendRendered(reply, movedPermanently(movedLocation(req, err.projectId)));
    }
    if (err instanceof DomainError) {
      const style = (req.routeOptions?.config as any)?.errorStyle ?? 'grape';
      return sendRendered(reply, renderDomainError(err, style));
    }
    const rendered = renderFrameworkError(err, req);
    if (rendered.status >= 500) req.log.error({ err }, 'request failed');
    return sendRendered(reply, rendered);
  });
}
