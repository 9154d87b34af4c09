import { ALL_SCOPES } from '../http/auth.ts';
import { SCOPE_DESCRIPTIONS } from '../oauth/scopes.ts';
import type { Application } from '../oauth/applications.ts';
import { splitRedirectUris } from '../oauth/redirect-uri.ts';
import { html, type Markup } from './html.ts';

export function signInView(o: { csrf: string; returnTo: string; login?: string; error?: string }): Markup {
  return html`<h1>Sign in</h1>
${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''}
<form method="post" action="/users/sign_in">
<input type="hidden" name="authenticity_token" value="${o.csrf}">
<input type="hidden" name="return_to" value="${o.returnTo}">
<label for="login">Username or email</label>
<input type="text" id="login" name="login" value="${o.login ?? ''}" autocomplete="username" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`;
}

export function errorView(description: string): Markup {
  return html`<h1>An error has occurred</h1>
<p class="error" role="alert">${description}</p>`;
}

export interface ConsentFields {
  client_id: string;
  redirect_uri: string;
  state?: string;
  response_type: string;
  response_mode?: string;
  scope: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

function hiddenFields(f: ConsentFields, csrf: string): Markup {
  return html`<input type="hidden" name="authenticity_token" value="${csrf}">
${Object.entries(f).filter(([, v]) => v !== undefined).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">\n`)}`;
}

export function consentView(o: { app: Application; owner: string | null; scopes: string[]; fields: ConsentFields; csrf: string; username: string }): Markup {
  const host = (() => {
    try {
      return new URL(o.fields.redirect_uri).host || o.fields.redirect_uri;
    } catch {
      return o.fields.redirect_uri;
    }
  })();
  return html`<h1>Authorize ${o.app.name} to use your account?</h1>
<p>An application called <strong>${o.app.name}</strong>${o.owner ? html` registered by <strong>${o.owner}</strong>` : ''} is requesting access to your account <strong>${o.username}</strong>.
After you authorize it, you will be sent to <code>${host}</code>.</p>
<p>This application will be able to:</p>
<ul class="scopes">
${o.scopes.map((s) => html`<li><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s] ?? s}</li>\n`)}
</ul>
<p>Only authorize applications you trust.</p>
<div class="actions">
<form method="post" action="/oauth/authorize">
${hiddenFields(o.fields, o.csrf)}
<button class="primary" type="submit" id="authorize">Authorize ${o.app.name}</button>
</form>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="_method" value="delete">
${hiddenFields(o.fields, o.csrf)}
<button type="submit" id="deny">Deny</button>
</form>
</div>`;
}

function scopeBoxes(selected: string[]): Markup {
  return html`<fieldset><legend>Scopes</legend>
${ALL_SCOPES.map((s) => html`<label><input type="checkbox" name="scopes[]" value="${s}"${selected.includes(s) ? html` checked` : ''}> <span><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s]}</span></label>\n`)}
</fieldset>`;
}

export interface AuthorizedApp {
  id: number;
  name: string;
  scopes: string;
  authorized_at: number;
}

export function applicationsView(o: {
  csrf: string; apps: Application[]; authorized: AuthorizedApp[];
  form: { name: string; redirect_uri: string; confidential: boolean; scopes: string[] }; errors?: Record<string, string[]>;
}): Markup {
  const errors = Object.entries(o.errors ?? {});
  return html`<h1>Applications</h1>
<h2>Add new application</h2>
${errors.length ? html`<div class="error" role="alert"><ul>${errors.map(([k, ms]) => ms.map((m) => html`<li>${labelOf(k)} ${m}</li>`))}</ul></div>` : ''}
<form method="post" action="/profile/applications">
<input type="hidden" name="authenticity_token" value="${o.csrf}">
<label for="name">Name</label>
<input type="text" id="name" name="name" value="${o.form.name}" required>
<label for="redirect_uri">Redirect URI</label>
<textarea id="redirect_uri" name="redirect_uri" rows="3" required aria-describedby="redirect_help">${o.form.redirect_uri}</textarea>
<small id="redirect_help">Use one line per URI.</small>
<fieldset><legend>Confidential</legend>
<label><input type="checkbox" id="confidential" name="confidential" value="1"${o.form.confidential ? html` checked` : ''}> <span>The application is used where the client secret can be kept confidential. Native mobile apps and single-page apps are not confidential.</span></label>
</fieldset>
${scopeBoxes(o.form.scopes)}
<div class="actions"><button class="primary" type="submit" id="save-application">Save application</button></div>
</form>
<h2>Your applications (${o.apps.length})</h2>
${o.apps.length === 0 ? html`<p>You have no applications.</p>` : html`<table><thead><tr><th>Name</th><th>Callback URL</th><th>Clients</th><th></th></tr></thead><tbody>
${o.apps.map((a) => html`<tr><td><a href="/profile/applications/${a.id}">${a.name}</a></td><td>${splitRedirectUris(a.redirect_uri).map((u) => html`<div>${u}</div>`)}</td><td>${a.confidential ? 'Confidential' : 'Public'}</td>
<td><form method="post" action="/profile/applications/${a.id}/delete"><input type="hidden" name="authenticity_token" value="${o.csrf}"><button class="danger" type="submit">Destroy</button></form></td></tr>\n`)}
</tbody></table>`}
<h2>Authorized applications (${o.authorized.length})</h2>
${o.authorized.length === 0 ? html`<p>You have not authorized any applications.</p>` : html`<table><thead><tr><th>Name</th><th>Authorized at</th><th>Scopes</th><th></th></tr></thead><tbody>
${o.authorized.map((a) => html`<tr><td>${a.name}</td><td>${new Date(a.authorized_at).toISOString()}</td><td>${a.scopes}</td>
<td><form method="post" action="/profile/applications/authorized/${a.id}/revoke"><input type="hidden" name="authenticity_token" value="${o.csrf}"><button class="danger" type="submit">Revoke</button></form></td></tr>\n`)}
</tbody></table>`}`;
}

function labelOf(k: string): string {
  return ({ name: 'Name', redirect_uri: 'Redirect URI', scopes: 'Scopes' } as Record<string, string>)[k] ?? k;
}

export function applicationView(o: { app: Application; csrf: string; secret?: string; created?: boolean }): Markup {
  const a = o.app;
  return html`<h1>Application: ${a.name}</h1>
${o.created ? html`<p class="notice" role="status">The application was created. Copy the secret now: it is not shown again.</p>` : ''}
${o.secret && !o.created ? html`<p class="notice" role="status">A new secret was generated. Copy it now: it is not shown again.</p>` : ''}
<table>
<tr><th>Application ID</th><td><code id="application_id">${a.uid}</code></td></tr>
<tr><th>Secret</th><td>${o.secret ? html`<code class="secret" id="secret">${o.secret}</code>` : html`<span>Hidden. Renew it to get a new one.</span>`}</td></tr>
<tr><th>Callback URL</th><td>${splitRedirectUris(a.redirect_uri).map((u) => html`<div><code>${u}</code></div>`)}</td></tr>
<tr><th>Confidential</th><td>${a.confidential ? 'Yes' : 'No'}</td></tr>
<tr><th>Scopes</th><td>${a.scopes.split(' ').map((s) => html`<div><strong>${s}</strong></div>`)}</td></tr>
</table>
<div class="actions">
<form method="post" action="/profile/applications/${a.id}/renew"><input type="hidden" name="authenticity_token" value="${o.csrf}"><button type="submit">Renew secret</button></form>
<form method="post" action="/profile/applications/${a.id}/delete"><input type="hidden" name="authenticity_token" value="${o.csrf}"><button class="danger" type="submit">Destroy</button></form>
</div>
<p><a href="/profile/applications">Back to applications</a></p>`;
}
