// The external spam services: Akismet's comment check and reCAPTCHA's verify endpoint. Each call is one POST with
// a short timeout; the caller decides what a failure means (a failing source never blocks a request).

/** How long an external spam service may take before it counts as failing. */
export const SERVICE_TIMEOUT_MS = 3000;

export class SpamServiceError extends Error {}

async function post(url: string, form: Record<string, string>): Promise<{ status: number; text: string; headers: Headers }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Bellows' },
      body: new URLSearchParams(form).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(SERVICE_TIMEOUT_MS),
    });
  } catch (e) {
    throw new SpamServiceError(`request failed: ${(e as Error).message}`);
  }
  const text = (await res.text().catch(() => '')).slice(0, 10_000);
  if (!res.ok) throw new SpamServiceError(`answered ${res.status}`);
  return { status: res.status, text, headers: res.headers };
}

export interface AkismetComment {
  blog: string;
  userIp: string;
  userAgent: string;
  referrer: string;
  author: string;
  authorEmail: string;
  content: string;
}

/** Akismet's verdict: true for spam (blatant or not); a key Akismet refuses or any other answer is an error. */
export async function akismetSaysSpam(baseUrl: string, apiKey: string, c: AkismetComment): Promise<boolean> {
  const { text, headers } = await post(`${baseUrl.replace(/\/+$/, '')}/1.1/comment-check`, {
    api_key: apiKey, blog: c.blog, user_ip: c.userIp, user_agent: c.userAgent, referrer: c.referrer,
    comment_type: 'comment', comment_author: c.author, comment_author_email: c.authorEmail, comment_content: c.content,
  });
  const answer = text.trim();
  if (answer === 'true') return true;
  if (answer === 'false') return false;
  throw new SpamServiceError(`unexpected answer ${JSON.stringify(answer.slice(0, 80))}${headers.get('x-akismet-debug-help') ? `: ${headers.get('x-akismet-debug-help')}` : ''}`);
}

/**
 * Tells Akismet a text it may have flagged is not spam (`submit-ham`, the reference's HamService). Akismet thanks
 * for any submission; a key it refuses ("invalid") or a failing service is an error.
 */
export async function akismetSubmitHam(baseUrl: string, apiKey: string, c: AkismetComment): Promise<void> {
  const { text } = await post(`${baseUrl.replace(/\/+$/, '')}/1.1/submit-ham`, {
    api_key: apiKey, blog: c.blog, user_ip: c.userIp, user_agent: c.userAgent, referrer: c.referrer,
    comment_type: 'comment', comment_author: c.author, comment_author_email: c.authorEmail, comment_content: c.content,
  });
  if (text.trim() === 'invalid') throw new SpamServiceError('the API key was refused');
}

/** Whether reCAPTCHA accepts a response token (v2 `siteverify`). */
export async function recaptchaAccepts(verifyUrl: string, secret: string, response: string, remoteIp: string): Promise<boolean> {
  const { text } = await post(verifyUrl, { secret, response, remoteip: remoteIp });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new SpamServiceError('answer is not JSON');
  }
  return (body as { success?: unknown })?.success === true;
}
