import type { FastifyInstance } from 'fastify';
import { registerSignIn } from './sign-in.ts';
import { registerApplicationPages } from './applications.ts';

/** The few server-rendered pages: sign-in and sign-out, and /profile/applications. */
export function registerWeb(app: FastifyInstance): void {
  registerSignIn(app);
  registerApplicationPages(app);
}
