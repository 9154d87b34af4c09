import { renderMarkup } from '../../platform/markdown.ts';
import type { WikiPage } from './wikis.service.ts';

// Wiki pages → wire JSON in the reference's field order (WikiPageBasic; WikiPage adds content and encoding).

export function wikiPageBasic(p: WikiPage) {
  return { format: p.format, slug: p.slug, title: p.title };
}

/**
 * Content as stored, front matter included. Bytes that are not UTF-8 are given one character per byte and named
 * `ASCII-8BIT`, as the reference names a binary string. `render_html` gives the page as HTML through the one
 * renderer (`platform/markdown.ts`: Markdown rendered safely, other formats escaped as preformatted text).
 */
export function wikiPageEntity(p: WikiPage, o: { renderHtml?: boolean } = {}) {
  const bytes = p.content ?? Buffer.alloc(0);
  const utf8 = isUtf8(bytes);
  const text = utf8 ? bytes.toString('utf8') : bytes.toString('latin1');
  return { ...wikiPageBasic(p), content: o.renderHtml ? renderMarkup(p.format, text) : text, encoding: utf8 ? 'UTF-8' : 'ASCII-8BIT' };
}

function isUtf8(b: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
}

const IMAGE = /\.(png|jpe?g|gif|bmp|tiff?|ico|webp|svg)$/i;

export function wikiAttachmentEntity(a: { file_name: string; file_path: string; branch: string }) {
  const markdown = IMAGE.test(a.file_name) ? `![${a.file_name}](${a.file_path})` : `[${a.file_name}](${a.file_path})`;
  return { ...a, link: { url: a.file_path, markdown } };
}
