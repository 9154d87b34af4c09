import { iso } from '../../http/format.ts';
import type { SshKeyRow } from './ssh-keys.service.ts';

// The reference's SSHKey entity. `key` is the publishable form: the comment (often an e-mail address) is
// replaced by "<user name> (<host>)".

export function sshKey(k: SshKeyRow, ownerName: string, externalUrl: string) {
  return {
    id: k.id,
    title: k.title,
    created_at: iso(k.created_at),
    expires_at: iso(k.expires_at),
    key: publishableKey(k.key, ownerName, externalUrl),
    usage_type: k.usage_type,
  };
}

export function publishableKey(key: string, ownerName: string, externalUrl: string): string {
  return [...key.split(/\s+/).slice(0, 2), `${ownerName} (${new URL(externalUrl).hostname})`].join(' ');
}
