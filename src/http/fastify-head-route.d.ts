// fastify's own step that turns a GET answer into its HEAD answer (the one its HEAD copies of GET routes run).
declare module 'fastify/lib/head-route.js' {
  import type { onSendHookHandler } from 'fastify';
  export function parseHeadOnSendHandlers(handlers: null): onSendHookHandler;
}
