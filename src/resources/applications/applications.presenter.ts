import type { Application } from '../../oauth/applications.ts';

/** The reference's Application entity; the secret appears only in the answer that created it. */
export function applicationEntity(a: Application, secret?: string) {
  const out: Record<string, unknown> = {
    id: a.id,
    application_id: a.uid,
    application_name: a.name,
  };
  if (secret) out.secret = secret;
  out.callback_url = a.redirect_uri;
  out.confidential = !!a.confidential;
  return out;
}
