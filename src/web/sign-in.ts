import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthParams } from '../oauth/params.ts';
import { sendPage } from './page.ts';
import { signInView } from './views.ts';
import { checkSignIn } from '../platform/sign-in.ts';
import { currentSession, csrfValid, endSession, preSessionToken, preSessionValid, safeReturnTo, startSession } from './session.ts';

/** Browser pages are not part of the API document. */
const HIDDEN = { schema: { hide: true } as object };

export function formExpired(reply: FastifyReply, user?: { username: string; csrf: string } | null): FastifyReply {
  return sendPage(reply, {
    title: 'The change you requested was rejected',
    status: 422,
    user,
    body: signInNotice('The form has expired or did not come from this site. Go back, reload the page and try again.'),
  });
}

function signInNotice(text: string) {
  return signInView({ csrf: '', returnTo: '/', error: text });
}

/** Where a signed-out visitor is sent, remembering the page to come back to. */
export function signInRedirect(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.redirect(`/users/sign_in?return_to=${encodeURIComponent(req.url)}`, 302);
}

export function registerSignIn(app: FastifyInstance): void {
  app.get('/users/sign_in', HIDDEN, async (req, reply) => {
    const p = oauthParams(req);
    const returnTo = safeReturnTo(p.return_to);
    if (await currentSession(req)) return reply.redirect(returnTo, 302);
    return sendPage(reply, { title: 'Sign in', body: signInView({ csrf: preSessionToken(req, reply), returnTo }) });
  });

  app.post('/users/sign_in', HIDDEN, async (req, reply) => {
    const p = oauthParams(req);
    const returnTo = safeReturnTo(p.return_to);
    const login = (p.login ?? p.username ?? '').trim();
    if (!preSessionValid(req, p.authenticity_token)) {
      return sendPage(reply, { title: 'Sign in', status: 422, body: signInView({ csrf: preSessionToken(req, reply), returnTo, login, error: 'The form has expired. Please sign in again.' }) });
    }
    const result = await checkSignIn(req.server, login, p.password ?? '', req.ip);
    if (result.ok) {
      await startSession(req, reply, result.user);
      return reply.redirect(returnTo, 302);
    }
    const csrf = preSessionToken(req, reply);
    if (result.reason === 'throttled' || result.reason === 'locked') {
      reply.header('retry-after', String(result.retryAfterSeconds));
      const error = result.reason === 'locked'
        ? `Too many failed sign-in attempts. Your account is locked for this address; try again in ${Math.ceil(result.retryAfterSeconds / 60)} minutes.`
        : `Too many failed sign-in attempts. Try again in ${result.retryAfterSeconds} seconds.`;
      return sendPage(reply, { title: 'Sign in', status: 429, body: signInView({ csrf, returnTo, login, error }) });
    }
    if (result.reason === 'blocked') {
      return sendPage(reply, { title: 'Sign in', status: 403, body: signInView({ csrf, returnTo, login, error: 'Your account has been blocked. Contact your administrator.' }) });
    }
    return sendPage(reply, { title: 'Sign in', status: 401, body: signInView({ csrf, returnTo, login, error: 'Invalid login or password.' }) });
  });

  app.post('/users/sign_out', HIDDEN, async (req, reply) => {
    const session = await currentSession(req);
    if (session) {
      if (!csrfValid(req, session, oauthParams(req).authenticity_token)) return formExpired(reply, { username: session.user.username, csrf: session.csrf });
      await endSession(req, reply);
    }
    return reply.redirect('/users/sign_in', 302);
  });
}
