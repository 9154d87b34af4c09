// Wire formats shared by every presenter.

/** ISO 8601 in UTC with milliseconds, e.g. "2016-07-02T10:11:12.000Z"; null stays null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A calendar date "YYYY-MM-DD". */
export function isoDate(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString().slice(0, 10);
}

export function bool(v: number | boolean | null | undefined): boolean {
  return !!v;
}

/**
 * A project's SSH clone URL: the scp-like form on port 22, an ssh:// URL naming the port otherwise (the reference's
 * `ssh_url_to_repo`). An IPv6 address gets brackets in both forms.
 */
export function sshUrlToRepo(ssh: { sshHost: string; sshPort: number }, fullPath: string): string {
  const host = ssh.sshHost.includes(':') && !ssh.sshHost.startsWith('[') ? `[${ssh.sshHost}]` : ssh.sshHost;
  return ssh.sshPort === 22 ? `git@${host}:${fullPath}.git` : `ssh://git@${host}:${ssh.sshPort}/${fullPath}.git`;
}

export function webUrl(base: string, ...path: string[]): string {
  return [base, ...path.map((p) => p.replace(/^\/+|\/+$/g, ''))].join('/');
}
