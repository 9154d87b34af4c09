import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { Bool, Enum, File, IdOrPath, Input, Opt, Str } from '../../http/schemas.ts';
import { createPage, deletePage, getPage, listPages, updatePage, uploadAttachment, WIKI_FORMATS } from './wikis.service.ts';
import { wikiAttachmentEntity, wikiPageBasic, wikiPageEntity } from './wikis.presenter.ts';
import { WikiAttachment, WikiPage, WikiPageBasic } from './wikis.schemas.ts';

const tags = ['wikis'];
const Format = Enum(WIKI_FORMATS);
const slug = { id: IdOrPath(), slug: Str({ maxLength: 1024 }) };

export const wikiRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/projects/:id/wikis', summary: "A project's wiki pages", tags, access: 'public', project: { ability: 'read_wiki' },
    response: Type.Array(Type.Union([WikiPage, WikiPageBasic])), input: Input({ id: IdOrPath(), with_content: Opt(Bool({ default: false })) }),
    handler: async (req) => {
      const pages = await listPages(req.server, req.project.project, !!req.input.with_content);
      return pages.map((p) => (req.input.with_content ? wikiPageEntity(p) : wikiPageBasic(p)));
    },
  },
  {
    method: 'GET', url: '/projects/:id/wikis/:slug', summary: 'One wiki page', tags, access: 'public', project: { ability: 'read_wiki' },
    response: WikiPage, input: Input({ ...slug, render_html: Opt(Bool({ default: false })), version: Opt(Str({ maxLength: 64 })) }),
    handler: async (req) => wikiPageEntity(await getPage(req.server, req.project.project, req.input.slug, req.input.version), { renderHtml: req.input.render_html }),
  },
  {
    method: 'POST', url: '/projects/:id/wikis', summary: 'Create a wiki page', tags, access: 'authenticated', project: { ability: 'create_wiki' },
    response: WikiPage, input: Input({ id: IdOrPath(), title: Str(), content: Str(), format: Opt(Format) }),
    handler: async (req) => wikiPageEntity(await createPage(req.server, req.actor, req.project.project, req.input)),
  },
  {
    method: 'PUT', url: '/projects/:id/wikis/:slug', summary: 'Edit a wiki page', tags, access: 'authenticated', project: { ability: 'create_wiki' },
    response: WikiPage, input: Input({ ...slug, title: Opt(Str()), content: Opt(Str()), format: Opt(Format) }),
    handler: async (req) => wikiPageEntity(await updatePage(req.server, req.actor, req.project.project, req.input.slug, req.input)),
  },
  {
    method: 'DELETE', url: '/projects/:id/wikis/:slug', summary: 'Delete a wiki page', tags, access: 'authenticated', project: { ability: 'admin_wiki' },
    response: null, input: Input(slug),
    handler: async (req) => {
      await deletePage(req.server, req.actor, req.project.project, req.input.slug);
      return undefined;
    },
  },
  {
    method: 'POST', url: '/projects/:id/wikis/attachments', summary: "Upload a file to the wiki's repository", tags, access: 'authenticated', project: { ability: 'create_wiki' },
    response: WikiAttachment, input: Input({ id: IdOrPath(), file: File({ description: 'the file (multipart)' }), branch: Opt(Str()) }),
    handler: async (req) => wikiAttachmentEntity(await uploadAttachment(req.server, req.actor, req.project.project, req.input.file, req.input.branch)),
  },
];
