import { SETTING_NAMES, type ApplicationSettings } from '../../platform/application-settings.ts';

/** The instance has one settings record, id 1 (the reference's). Fields in the registry's order. */
export function presentSettings(s: Readonly<ApplicationSettings>): Record<string, unknown> {
  return { id: 1, ...Object.fromEntries(SETTING_NAMES.map((n) => [n, s[n]])) };
}
