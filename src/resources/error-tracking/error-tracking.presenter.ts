import type { ClientKeyRow, SettingRow } from './error-tracking.service.ts';
import { trackerDsn } from './error-tracking.service.ts';

// Field order and names of the spec (`tracker_*`, where the reference says `sentry_*`).

export function errorTrackingSetting(s: SettingRow) {
  return {
    active: !!s.enabled,
    project_name: s.project_name,
    // The tracker's web address is its API address without the API path, as the reference derives it.
    tracker_external_url: s.api_url === null ? null : s.api_url.replace('api/0/projects/', ''),
    api_url: s.api_url,
    integrated: !!s.integrated,
  };
}

export function errorTrackingClientKey(k: ClientKeyRow, externalUrl: string) {
  return {
    id: k.id,
    active: !!k.active,
    public_key: k.public_key,
    tracker_dsn: trackerDsn(externalUrl, k.public_key, k.project_id),
  };
}
