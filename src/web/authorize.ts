import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { digest } from '../platform/crypto/tokens.ts';
import { CHALLENGE_RE } from '../platform/crypto/pkce.ts';
import { OAuthError } from '../platform/errors.ts';
import { oauthDescription } from '../http/errors.ts';
import { sendPage } from './page.ts';
import { consentView, errorView, type ConsentFields } from './views.ts';
import { currentSession, csrfValid, type WebSession } from './session.ts';
import { formExpired, signInRedirect } from './sign-in.ts';
import { applicationScopes, findByUid, type Application } from '../oauth/applications.ts';
import { oauthParams, present, type OAuthParams } from '../oauth/params.ts';
import { matchesRegistered, withParams } from '../oauth/redirect-uri.ts';
import { resolveScopes } from '../oauth/scopes.ts';
import { CODE_TTL_MS, newOpaqueToken } from '../oauth/tokens.ts';
import { doc } from '../oauth/doc.ts';

// The authorization endpoint: consent page (GET), approve (POST) and deny (DELETE, or POST with
// _method=delete from the HTML form). Errors about the client or the redirect URI are shown on a page
// and never redirected (no open redirect); every other error goes back to the client (RFC 6749 §4.1.2.1).

type PreAuth =
  | { ok: true; app: Application; redirectUri: string; scopes: string[]; fields: ConsentFields }
  | { ok: false; error: OAuthError; redirectUri?: string; state?: string };

async function preAuthorize(req: FastifyRequest, p: OAuthParams): Promise<PreAuth> {
  const clientId = present(p.client_id);
  if (!clientId) return { ok: false, error: new OAuthError('invalid_request', { missing: 'client_id' }) };
  const app = await findByUid(req.server, clientId);
  if (!app) return { ok: false, error: new OAuthError('invalid_client') };
  const redirectUri = present(p.redirect_uri);
  if (!redirectUri || !matchesRegistered(app.redirect_uri, redirectUri)) return { ok: false, error: new OAuthError('invalid_redirect_uri') };

  const state = present(p.state);
  const back = (error: OAuthError): PreAuth => ({ ok: false, error, redirectUri, state });
  const responseType = present(p.response_type);
  if (!responseType) return back(new OAuthError('invalid_request', { missing: 'response_type' }));
  if (responseType !== 'code') return back(new OAuthError('unsupported_response_type'));
  const responseMode = present(p.response_mode);
  if (responseMode !== undefined && responseMode !== 'query') return back(new OAuthError('unsupported_response_mode'));
  const scopes = resolveScopes(p.scope, applicationScopes(app));
  if (!scopes || scopes.length === 0) return back(new OAuthError('invalid_scope'));
  const challenge = present(p.code_challenge);
  const method = present(p.code_challenge_method);
  if (challenge !== undefined) {
    if (method !== 'S256') return back(new OAuthError('invalid_request', { reason: 'challenge_method' }));
    if (!CHALLENGE_RE.test(challenge)) return back(new OAuthError('invalid_request', { reason: 'challenge' }));
  }
  return {
    ok: true, app, redirectUri, scopes,
    fields: {
      client_id: clientId, redirect_uri: redirectUri, state, response_type: responseType, response_mode: responseMode,
      scope: scopes.join(' '), code_challenge: challenge, code_challenge_method: challenge ? method : undefined,
    },
  };
}

function redirectWithError(reply: FastifyReply, pre: Extract<PreAuth, { ok: false }>): FastifyReply {
  return reply.header('referrer-policy', 'no-referrer').redirect(withParams(pre.redirectUri!, {
    error: pre.error.code, error_description: oauthDescription(pre.error), state: pre.state,
  }), 302);
}

async function decide(req: FastifyRequest, reply: FastifyReply, approve: boolean): Promise<FastifyReply> {
  const session = await currentSession(req);
  if (!session) return reply.redirect('/users/sign_in', 302);
  const p = oauthParams(req);
  if (!csrfValid(req, session, p.authenticity_token)) return formExpired(reply, { username: session.user.username, csrf: session.csrf });
  const pre = await preAuthorize(req, p);
  if (!pre.ok) {
    if (pre.redirectUri) return redirectWithError(reply, pre);
    throw pre.error.on('authorize');
  }
  const state = present(p.state);
  if (!approve) {
    return redirectWithError(reply, { ok: false, error: new OAuthError('access_denied'), redirectUri: pre.redirectUri, state });
  }
  const code = newOpaqueToken();
  const now = req.server.clock.now();
  await req.server.db.insertInto('oauth_grants').values({
    application_id: pre.app.id, user_id: session.user.id, code_digest: digest(code), redirect_uri: pre.redirectUri,
    scopes: pre.scopes.join(' '), code_challenge: pre.fields.code_challenge ?? null,
    code_challenge_method: pre.fields.code_challenge ? 'S256' : null, expires_at: now + CODE_TTL_MS, created_at: now, revoked_at: null,
  }).execute();
  return reply.header('referrer-policy', 'no-referrer').redirect(withParams(pre.redirectUri, { code, state }), 302);
}

async function ownerName(req: FastifyRequest, app: Application): Promise<string | null> {
  if (app.owner_id === null) return null;
  const u = await req.server.db.selectFrom('users').select('username').where('id', '=', app.owner_id).executeTakeFirst();
  return u?.username ?? null;
}

function who(s: WebSession) {
  return { username: s.user.username, csrf: s.csrf };
}

export function registerAuthorize(app: FastifyInstance): void {
  app.get('/oauth/authorize', { schema: doc('Consent page of the authorization-code flow (HTML)') }, async (req, reply) => {
    // Signed-out visitors sign in first and come back here, before any parameter is looked at.
    const session = await currentSession(req);
    if (!session) return signInRedirect(req, reply);
    const pre = await preAuthorize(req, oauthParams(req));
    if (!pre.ok) {
      if (pre.redirectUri) return redirectWithError(reply, pre);
      return sendPage(reply, { title: 'An error has occurred', user: who(session), body: errorView(oauthDescription(pre.error)) });
    }
    return sendPage(reply, {
      title: `Authorize ${pre.app.name}`, user: who(session),
      body: consentView({ app: pre.app, owner: await ownerName(req, pre.app), scopes: pre.scopes, fields: pre.fields, csrf: session.csrf, username: session.user.username }),
    });
  });

  app.post('/oauth/authorize', { schema: doc('Approve an authorization request (or deny it with _method=delete)') }, async (req, reply) => decide(req, reply, oauthParams(req)._method?.toLowerCase() !== 'delete'));
  app.delete('/oauth/authorize', { schema: doc('Deny an authorization request') }, async (req, reply) => decide(req, reply, false));
}
