import MarkdownIt from 'markdown-it';

// The one Markdown renderer: every HTML the API renders from user text (wiki pages with `render_html`,
// `POST /markdown`) comes from here. Raw HTML in the text is never passed through (it is shown escaped), links and
// images keep only safe destinations (http, https, mailto, relative and anchors; never javascript:, vbscript:,
// data: or file:), and links say `rel="nofollow noreferrer noopener"`. Other markup formats are not rendered: their
// text is shown escaped in a `<pre>`, as the reference shows a plain text file.

const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });

/**
 * A link or image destination is kept when it has no scheme, or one of the few safe ones. Browsers ignore control
 * characters and whitespace inside a scheme ("java\tscript:"), and markdown-it hands over the destination with
 * entities decoded and percent-encoded: the scheme is judged both as given and decoded, without those characters.
 */
export function safeLink(url: string): boolean {
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // Not decodable: judged as given.
  }
  return [url, decoded].every((u) => {
    const squeezed = u.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
    const scheme = /^([a-z][a-z0-9+.-]*):/.exec(squeezed);
    return !scheme || ['http', 'https', 'mailto'].includes(scheme[1]);
  });
}

md.validateLink = safeLink;

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('rel', 'nofollow noreferrer noopener');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const FRONT_MATTER = /^(---|\+\+\+|;;;)[ \t]*\r?\n([\s\S]*?)\r?\n\1[ \t]*(?:\r?\n|$)/;

/** Markdown text as safe HTML (without a final newline); front matter at the top is shown as a YAML (TOML, JSON) code block, as the reference does. */
export function renderMarkdown(text: string): string {
  const fm = FRONT_MATTER.exec(text);
  if (!fm) return md.render(text).trimEnd();
  const lang = fm[1] === '---' ? 'yaml' : fm[1] === '+++' ? 'toml' : 'json';
  return `<pre class="front-matter" lang="${lang}"><code>${escapeHtml(fm[2])}</code></pre>\n${md.render(text.slice(fm[0].length)).trimEnd()}`;
}

/** Text of a markup format: Markdown rendered, any other format shown escaped as preformatted text. */
export function renderMarkup(format: string, text: string): string {
  if (format === 'markdown') return renderMarkdown(text);
  return `<pre class="plain-readme">${escapeHtml(text)}</pre>`;
}
