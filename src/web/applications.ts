import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { oauthParams } from '../oauth/params.ts';
import { MAX_ID, createApplication, deleteApplication, renewSecret, type Application } from '../oauth/applications.ts';
import { ValidationError } from '../platform/errors.ts';
import { sendPage } from './page.ts';
import { applicationView, applicationsView, errorView, type AuthorizedApp } from './views.ts';
import { currentSession, csrfValid, type WebSession } from './session.ts';
import { formExpired, signInRedirect } from './sign-in.ts';

/** Browser pages are not part of the API document. */
const HIDDEN = { schema: { hide: true } as object };

// /profile/applications: the signed-in user's own OAuth applications and the ones they authorized.

const DEFAULT_FORM = { name: '', redirect_uri: '', confidential: true, scopes: [] as string[] };

function who(s: WebSession) {
  return { username: s.user.username, csrf: s.csrf };
}

async function authorizedApps(req: FastifyRequest, userId: number): Promise<AuthorizedApp[]> {
  const now = req.server.clock.now();
  // Authorized = holding a token that still works, or a refresh token that can renew it.
  const rows = await req.server.db.selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
    .select(['a.id', 'a.name', 't.scopes', 't.created_at'])
    .where('t.user_id', '=', userId).where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', now), eb('t.refresh_token_digest', 'is not', null)]))
    .orderBy('t.created_at', 'desc').execute();
  const seen = new Map<number, AuthorizedApp>();
  for (const r of rows) if (!seen.has(r.id)) seen.set(r.id, { id: r.id, name: r.name, scopes: r.scopes, authorized_at: r.created_at });
  return [...seen.values()];
}

async function listPage(req: FastifyRequest, reply: FastifyReply, s: WebSession, form = DEFAULT_FORM, errors?: Record<string, string[]>, status = 200) {
  const apps = await req.server.db.selectFrom('oauth_applications').selectAll().where('owner_id', '=', s.user.id).orderBy('id', 'asc').execute();
  return sendPage(reply, {
    title: 'Applications', status, user: who(s),
    body: applicationsView({ csrf: s.csrf, apps, authorized: await authorizedApps(req, s.user.id), form, errors }),
  });
}

async function ownApp(req: FastifyRequest, s: WebSession, idParam: string): Promise<Application | undefined> {
  if (!/^\d{1,10}$/.test(idParam) || Number(idParam) > MAX_ID) return undefined;
  return req.server.db.selectFrom('oauth_applications').selectAll().where('id', '=', Number(idParam)).where('owner_id', '=', s.user.id).executeTakeFirst();
}

function notFound(reply: FastifyReply, s: WebSession) {
  return sendPage(reply, { title: 'Not found', status: 404, user: who(s), body: errorView('The application could not be found.') });
}

/** A signed-in session with a valid CSRF token for state-changing forms; otherwise the answer is sent. */
async function guard(req: FastifyRequest, reply: FastifyReply, write: boolean): Promise<WebSession | null> {
  const s = await currentSession(req);
  if (!s) {
    if (write) await reply.redirect('/users/sign_in', 302);
    else await signInRedirect(req, reply);
    return null;
  }
  if (write && !csrfValid(req, s, oauthParams(req).authenticity_token)) {
    await formExpired(reply, who(s));
    return null;
  }
  return s;
}

export function registerApplicationPages(app: FastifyInstance): void {
  app.get('/profile/applications', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, false);
    if (!s) return reply;
    return listPage(req, reply, s);
  });

  app.post('/profile/applications', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, true);
    if (!s) return reply;
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const rawScopes = body.scopes;
    const scopes = (Array.isArray(rawScopes) ? rawScopes : typeof rawScopes === 'string' ? rawScopes.split(/\s+/) : []).filter((x): x is string => typeof x === 'string' && x !== '');
    const form = {
      name: typeof body.name === 'string' ? body.name : '',
      redirect_uri: typeof body.redirect_uri === 'string' ? body.redirect_uri : '',
      confidential: body.confidential === '1' || body.confidential === 'true',
      scopes,
    };
    try {
      const { app: created, secret } = await createApplication(req.server, { name: form.name, redirectUri: form.redirect_uri, scopes, confidential: form.confidential, ownerId: s.user.id });
      return sendPage(reply, { title: `Application: ${created.name}`, status: 201, user: who(s), body: applicationView({ app: created, csrf: s.csrf, secret, created: true }) });
    } catch (e) {
      if (e instanceof ValidationError) return listPage(req, reply, s, form, e.errors as Record<string, string[]>, 422);
      throw e;
    }
  });

  app.get('/profile/applications/:id', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, false);
    if (!s) return reply;
    const a = await ownApp(req, s, (req.params as { id: string }).id);
    if (!a) return notFound(reply, s);
    return sendPage(reply, { title: `Application: ${a.name}`, user: who(s), body: applicationView({ app: a, csrf: s.csrf }) });
  });

  app.post('/profile/applications/:id/renew', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, true);
    if (!s) return reply;
    const a = await ownApp(req, s, (req.params as { id: string }).id);
    if (!a) return notFound(reply, s);
    const secret = await renewSecret(req.server, a);
    return sendPage(reply, { title: `Application: ${a.name}`, user: who(s), body: applicationView({ app: a, csrf: s.csrf, secret }) });
  });

  app.post('/profile/applications/:id/delete', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, true);
    if (!s) return reply;
    const a = await ownApp(req, s, (req.params as { id: string }).id);
    if (!a) return notFound(reply, s);
    await deleteApplication(req.server, a);
    return reply.redirect('/profile/applications', 302);
  });

  app.post('/profile/applications/authorized/:id/revoke', HIDDEN, async (req, reply) => {
    const s = await guard(req, reply, true);
    if (!s) return reply;
    const id = (req.params as { id: string }).id;
    if (!/^\d{1,10}$/.test(id) || Number(id) > MAX_ID) return notFound(reply, s);
    const now = req.server.clock.now();
    await req.server.db.updateTable('oauth_access_tokens').set({ revoked_at: now })
      .where('user_id', '=', s.user.id).where('application_id', '=', Number(id)).where('revoked_at', 'is', null).execute();
    await req.server.db.updateTable('oauth_grants').set({ revoked_at: now })
      .where('user_id', '=', s.user.id).where('application_id', '=', Number(id)).where('revoked_at', 'is', null).execute();
    return reply.redirect('/profile/applications', 302);
  });
}
