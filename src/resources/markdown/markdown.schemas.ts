import { Type } from '@sinclair/typebox';
import { Entity } from '../../http/response-schemas.ts';

// Response shape of POST /markdown.

export const MarkdownHtml = Entity({ html: Type.String() }, { description: 'Markdown' });
