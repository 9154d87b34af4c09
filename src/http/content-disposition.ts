// The one writer of Content-Disposition headers (RFC 6266 with RFC 5987 / 8187 extended values).

/** attr-char of RFC 5987: sent as is in `filename*`; every other byte of the UTF-8 name is percent-encoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/**
 * `inline; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded UTF-8>`. Header values are bytes in
 * the ASCII range, so a name such as "☃.txt" cannot go in as it is (Node refuses the header); clients that know
 * RFC 6266 read `filename*`, older ones the fallback, where anything outside printable ASCII, quotes and
 * backslashes become "_".
 */
export function contentDisposition(
  filename: string | null, type: 'inline' | 'attachment' = 'inline', opts: { plainWhenAscii?: boolean } = {},
): string {
  // Without a name (a blob by id) the header is the disposition alone, as the reference's Rails helper writes it.
  if (filename === null) return type;
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  // Buffer.from writes a lone surrogate as U+FFFD, so every name has a UTF-8 form.
  let encoded = '';
  for (const byte of Buffer.from(filename, 'utf8')) {
    const ch = String.fromCharCode(byte);
    encoded += byte < 0x80 && ATTR_CHAR.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // Archives are named as the reference's workhorse names them: the quoted name alone, when ASCII says it all.
  if (opts.plainWhenAscii && fallback === filename) return `${type}; filename="${filename}"`;
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
