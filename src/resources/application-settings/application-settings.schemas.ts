import { Type } from '@sinclair/typebox';
import { Entity } from '../../http/response-schemas.ts';
import { APPLICATION_SETTINGS, SETTING_NAMES } from '../../platform/application-settings.ts';

/** The reference's ApplicationSetting entity, limited to the settings Bellows honours: `id`, then each setting. */
export const ApplicationSetting = Entity({
  id: Type.Integer(),
  ...Object.fromEntries(SETTING_NAMES.map((n) => [n, APPLICATION_SETTINGS[n].type])),
}, { description: 'ApplicationSetting' });
