import type { RouteDef } from '../../http/route.ts';
import { Bool, Input, Opt, Str } from '../../http/schemas.ts';
import { findProject } from '../../http/access.ts';
import { renderMarkdown } from '../../platform/markdown.ts';
import { MarkdownHtml } from './markdown.schemas.ts';

// `POST /markdown`: renders a text with the one Markdown renderer. A `project` given as context must be readable
// (404 Project otherwise); Bellows resolves no references, so `gfm` and the project change nothing in the output.

export const markdownRoutes: RouteDef<any>[] = [
  {
    method: 'POST', url: '/markdown', summary: 'Render a Markdown text as HTML', tags: ['markdown'], access: 'authenticated', scopes: ['read_api'],
    response: MarkdownHtml, input: Input({ text: Str(), gfm: Opt(Bool()), project: Opt(Str({ maxLength: 1024 })) }),
    handler: async (req) => {
      if (req.input.project !== undefined) await findProject(req.server, req.actor, req.input.project, 'read_project');
      return { html: renderMarkdown(req.input.text) };
    },
  },
];
