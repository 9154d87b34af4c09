import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../platform/errors.ts';
import { unsubscribeByToken } from './notifications.service.ts';

// The unsubscribe link of a notification e-mail, outside the API and its credentials: the signed token in the path
// names the user and the record. GET (the link followed) and POST (the one-click unsubscribe of RFC 8058 that mail
// clients send from `List-Unsubscribe-Post`) both unsubscribe the user from the record and answer a line of text;
// a token that is malformed, not signed by this server or names a record that is gone answers 404.
//   GET|POST /-/sent_notifications/<token>/unsubscribe

async function unsubscribe(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
  const { token } = req.params as { token: string };
  const done = await unsubscribeByToken(app, token);
  if (!done) throw new NotFoundError('Notification');
  const what = done.kind === 'Issue' ? 'issue' : 'merge request';
  return reply.code(200).header('content-type', 'text/plain; charset=utf-8').header('cache-control', 'no-store')
    .send(`You have been unsubscribed from the ${what} "${done.title}".\n`);
}

export function registerUnsubscribe(app: FastifyInstance): void {
  app.register(async (scope) => {
    // Whatever a mail client posts (usually `List-Unsubscribe=One-Click`) is not needed: read as text and ignored.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 4096 }, (_req, body, done) => done(null, body));
    const opts = { schema: { hide: true } as object, exposeHeadRoute: false };
    scope.get('/-/sent_notifications/:token/unsubscribe', opts, (req, reply) => unsubscribe(app, req, reply));
    scope.post('/-/sent_notifications/:token/unsubscribe', opts, (req, reply) => unsubscribe(app, req, reply));
  });
}
