import { Type } from '@sinclair/typebox';
import { Entity, Iso, Nullable } from '../../http/response-schemas.ts';
import { UserBasic } from '../users/users.schemas.ts';

// Response shapes of snippets.presenter.ts, same field order.

const BasicFields = {
  id: Type.Integer(),
  title: Type.String(),
  description: Nullable(Type.String()),
  visibility: Type.String(),
  updated_at: Iso(),
  created_at: Iso(),
  project_id: Nullable(Type.Integer()),
  web_url: Type.String(),
  raw_url: Type.String(),
  ssh_url_to_repo: Type.String(),
  http_url_to_repo: Type.String(),
  author: UserBasic,
};

/** A snippet without its files (a storage move's snippet). */
export const BasicSnippet = Entity(BasicFields, { description: 'BasicSnippet' });

export const Snippet = Entity({
  ...BasicFields,
  file_name: Nullable(Type.String()),
  files: Type.Array(Entity({ path: Type.String(), raw_url: Type.String() })),
}, { description: 'Snippet' });

export const UserAgentDetail = Entity({
  user_agent: Nullable(Type.String()),
  ip_address: Nullable(Type.String()),
  akismet_submitted: Type.Boolean(),
}, { description: 'UserAgentDetail' });
