// The one writer of Content-Disposition headers (RFC 6266 with RFC 5987 / 8187 extended values).

/** attr-char of RFC 5987: sent as is in `filename*`; every other byte of the UTF-8 name is percent-encoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/**
 * `inline; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded UTF-8>`. Header values are bytes in
 * the ASCII range, so a name such as "☃.txt" cannot go in as it is (Node refuses the header); clients that know
 * RFC 6266 read `filename*`, older ones the fallback, where anything outside printable ASCII, quotes and
 * backslashes become "_".
 */
export function contentDisposition(filename: string, type: 'inline' | 'attachment' = 'inline'): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/gu, '_');
  // Buffer.from writes a lone surrogate as U+FFFD, so every name has a UTF-8 form.
  let encoded = '';
  for (const byte of Buffer.from(filename, 'utf8')) {
    const ch = String.fromCharCode(byte);
    encoded += byte < 0x80 && ATTR_CHAR.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
