import { Type } from '@sinclair/typebox';
import { Entity } from '../../http/response-schemas.ts';

// Response shapes of wikis.presenter.ts, same field order.

export const WikiPageBasic = Entity({ format: Type.String(), slug: Type.String(), title: Type.String() }, { description: 'WikiPageBasic' });

export const WikiPage = Entity({
  format: Type.String(), slug: Type.String(), title: Type.String(), content: Type.String(), encoding: Type.String(),
}, { description: 'WikiPage' });

export const WikiAttachment = Entity({
  file_name: Type.String(), file_path: Type.String(), branch: Type.String(),
  link: Entity({ url: Type.String(), markdown: Type.String() }),
}, { description: 'WikiAttachment' });
