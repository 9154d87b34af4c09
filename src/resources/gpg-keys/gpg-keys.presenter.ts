import { iso } from '../../http/format.ts';
import type { GpgKeyRow } from './gpg-keys.service.ts';

export function gpgKey(k: GpgKeyRow) {
  return { id: k.id, key: k.key, created_at: iso(k.created_at) };
}
