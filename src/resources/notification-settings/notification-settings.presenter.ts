import { eventValues, type Setting, type Source } from './notification-settings.service.ts';

/** `level`, then `events` when the level is custom, then (global setting only) `notification_email`. */
export function notificationSettingJson(setting: Setting, source: Source, primaryEmail?: string) {
  const out: Record<string, unknown> = { level: setting.level };
  if (setting.level === 'custom') out.events = eventValues(source, setting.events);
  if (source.type === 'Global') out.notification_email = setting.notificationEmail ?? primaryEmail ?? null;
  return out;
}
