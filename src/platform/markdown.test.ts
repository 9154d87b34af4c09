import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, renderMarkup, safeLink } from './markdown.ts';

const A = 'rel="nofollow noreferrer noopener"';

test('Markdown is rendered', () => {
  assert.equal(renderMarkdown('# Title\n\nSome *text* and `code`.'), '<h1>Title</h1>\n<p>Some <em>text</em> and <code>code</code>.</p>');
  assert.equal(renderMarkdown('[docs](https://example.com/a?b=1)'), `<p><a href="https://example.com/a?b=1" ${A}>docs</a></p>`);
  assert.equal(renderMarkdown('see https://example.com'), `<p>see <a href="https://example.com" ${A}>https://example.com</a></p>`);
  assert.equal(renderMarkdown('[rel](other-page) [top](#top) [mail](mailto:a@b.c)'),
    `<p><a href="other-page" ${A}>rel</a> <a href="#top" ${A}>top</a> <a href="mailto:a@b.c" ${A}>mail</a></p>`);
  assert.equal(renderMarkdown('![logo](uploads/a/logo.png)'), '<p><img src="uploads/a/logo.png" alt="logo"></p>');
});

test('raw HTML is shown escaped, never passed through', () => {
  assert.equal(renderMarkdown('<script>alert(1)</script>'), '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
  assert.equal(renderMarkdown('a <img src=x onerror=alert(1)> b'), '<p>a &lt;img src=x onerror=alert(1)&gt; b</p>');
  assert.equal(renderMarkdown('<a href="javascript:alert(1)">x</a>'), '<p>&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;</p>');
  assert.equal(renderMarkdown('<div>\n<iframe src="/evil"></iframe>\n</div>'),
    '<p>&lt;div&gt;\n&lt;iframe src=&quot;/evil&quot;&gt;&lt;/iframe&gt;\n&lt;/div&gt;</p>');
  assert.equal(renderMarkdown('`<b>`'), '<p><code>&lt;b&gt;</code></p>');
  assert.equal(renderMarkdown('[x](https://a.b/"onmouseover="alert(1))'), `<p><a href="https://a.b/%22onmouseover=%22alert(1)" ${A}>x</a></p>`);
});

test('script links and images are not made', () => {
  for (const text of [
    '[x](javascript:alert(1))', '[x](JavaScript:alert(1))', '[x](java\tscript:alert(1))', '[x](javascript&#58;alert(1))',
    '[x](&#106;avascript:alert(1))', '[x](vbscript:msgbox(1))', '[x](data:text/html;base64,PHNjcmlwdD4=)', '[x](file:///etc/passwd)',
    '![x](javascript:alert(1))', '![x](data:image/svg+xml;base64,PHN2Zz4=)', '<javascript:alert(1)>', '[x][r]\n\n[r]: javascript:alert(1)',
  ]) {
    const html = renderMarkdown(text);
    assert.doesNotMatch(html, /<a |<img /, `${text} → ${html}`);
  }
  assert.equal(safeLink('java%73cript:alert(1)'), false);
  assert.equal(safeLink('JAVA\u0000SCRIPT:x'), false);
  assert.equal(safeLink('https://example.com'), true);
  assert.equal(safeLink('/relative/path:with-colon'), true);
});

test('front matter is shown as a code block; other formats as escaped preformatted text', () => {
  assert.equal(renderMarkdown('---\ntitle: <x>\n---\n# Hello'), '<pre class="front-matter" lang="yaml"><code>title: &lt;x&gt;</code></pre>\n<h1>Hello</h1>');
  assert.equal(renderMarkup('org', '* Head <script>x</script>'), '<pre class="plain-readme">* Head &lt;script&gt;x&lt;/script&gt;</pre>');
  assert.equal(renderMarkup('asciidoc', '= T\n"q" & \'s\''), '<pre class="plain-readme">= T\n&quot;q&quot; &amp; &#39;s&#39;</pre>');
  assert.equal(renderMarkup('markdown', '*a*'), '<p><em>a</em></p>');
});
