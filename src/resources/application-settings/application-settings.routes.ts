import type { RouteDef } from '../../http/route.ts';
import { Input, Opt } from '../../http/schemas.ts';
import {
  APPLICATION_SETTINGS, SETTING_ALIASES, SETTING_NAMES, applicationSettings, updateApplicationSettings, type ApplicationSettings,
} from '../../platform/application-settings.ts';
import { ParamError } from '../../platform/errors.ts';
import { presentSettings } from './application-settings.presenter.ts';
import { ApplicationSetting } from './application-settings.schemas.ts';

// The instance's application settings: administrators only (anonymous 401, anyone else 403).

const tags = ['settings'];

const params = {
  ...Object.fromEntries(SETTING_NAMES.map((n) => [n, Opt({ ...APPLICATION_SETTINGS[n].type, description: APPLICATION_SETTINGS[n].description })])),
  ...Object.fromEntries(Object.entries(SETTING_ALIASES).map(([alias, n]) => [alias, Opt({ ...APPLICATION_SETTINGS[n].type, description: `Deprecated: use ${n}` })])),
};

export const applicationSettingRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/application/settings', summary: 'The current application settings', tags, access: 'admin',
    response: ApplicationSetting,
    handler: async (req) => presentSettings(await applicationSettings(req.server)),
  },
  {
    method: 'PUT', url: '/application/settings', summary: 'Change application settings', tags, access: 'admin',
    response: ApplicationSetting,
    input: Input(params),
    handler: async (req) => {
      const changes: Record<string, unknown> = {};
      for (const [alias, name] of Object.entries(SETTING_ALIASES)) if (req.input[alias] !== undefined) changes[name] = req.input[alias];
      for (const name of SETTING_NAMES) if (req.input[name] !== undefined) changes[name] = req.input[name];
      if (!Object.keys(changes).length) throw ParamError.group(Object.keys(params), 'at_least_one');
      return presentSettings(await updateApplicationSettings(req.server, changes as Partial<ApplicationSettings>));
    },
  },
];
