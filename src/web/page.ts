import type { FastifyReply } from 'fastify';
import { html, raw, type Markup } from './html.ts';

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1f1f24}
header{background:#28264a;color:#fff;padding:.7rem 1.5rem;display:flex;justify-content:space-between;align-items:center}
main{max-width:46rem;margin:2rem auto;background:#fff;border:1px solid #dcdcde;border-radius:6px;padding:1.5rem 2rem}
h1{font-size:1.5rem;margin-top:0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}
input[type=text],input[type=password],textarea{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #bfbfc3;border-radius:4px;font:inherit}
fieldset{border:1px solid #dcdcde;border-radius:4px;margin-top:.9rem}
fieldset label{font-weight:400;display:flex;gap:.5rem;margin:.3rem 0}
button{font:inherit;padding:.5rem 1rem;border-radius:4px;border:1px solid #bfbfc3;background:#fff;cursor:pointer}
header a{color:#fff}
header button{background:transparent;border-color:#8f8fb8;color:#fff;padding:.25rem .75rem}
button.primary{background:#1f75cb;border-color:#1f75cb;color:#fff}
button.danger{background:#dd2b0e;border-color:#dd2b0e;color:#fff}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}
.inline{display:inline}
.error{background:#fdf1ee;border:1px solid #dd2b0e;color:#8d1300;padding:.75rem;border-radius:4px}
.notice{background:#ecf4ee;border:1px solid #108548;padding:.75rem;border-radius:4px}
code,.secret{font-family:ui-monospace,Menlo,monospace;word-break:break-all;background:#f0f0f2;padding:.1rem .3rem;border-radius:3px}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.4rem;border-bottom:1px solid #ececef;vertical-align:top}
ul.scopes li{margin:.4rem 0}
.broadcast-message{background:#28264a;color:#fff;padding:.6rem 1.5rem;text-align:center}
`;

export interface PageOptions {
  title: string;
  body: Markup;
  status?: number;
  /** The signed-in user's name and CSRF token, for the header's sign-out form. */
  user?: { username: string; csrf: string } | null;
}

/**
 * Sends a server-rendered page. None of the pages may be framed (clickjacking, RFC 9700 §4.16),
 * leak the code or state through the referrer, or be cached.
 */
export function sendPage(reply: FastifyReply, o: PageOptions): FastifyReply {
  const banners = (reply.request as { broadcastBanners?: string }).broadcastBanners ?? '';
  const doc = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${o.user ? html`<meta name="csrf-token" content="${o.user.csrf}">` : ''}
<title>${o.title} · Bellows</title>
<style>${STYLE}</style>
</head>
<body>
<header><strong>Bellows</strong>${o.user ? html`<span>${o.user.username} · <form class="inline" method="post" action="/users/sign_out"><input type="hidden" name="authenticity_token" value="${o.user.csrf}"><button type="submit">Sign out</button></form></span>` : ''}</header>
${raw(banners)}
<main>
${o.body}
</main>
</body>
</html>
`;
  return reply
    .code(o.status ?? 200)
    .header('content-type', 'text/html; charset=utf-8')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(doc.value);
}
