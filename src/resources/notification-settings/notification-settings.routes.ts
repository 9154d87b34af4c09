import type { ApiRequest, RouteDef } from '../../http/route.ts';
import { Bool, IdOrPath, Input, Opt, Str } from '../../http/schemas.ts';
import {
  EVENTS, GLOBAL, LEVELS, getNotificationSetting, updateNotificationSetting, type EventName, type Source,
} from './notification-settings.service.ts';
import { notificationSettingJson } from './notification-settings.presenter.ts';
import { NotificationSetting } from './notification-settings.schemas.ts';

const tags = ['notification_settings'];
const level = Opt(Str({ description: `one of ${LEVELS.join(', ')}` }));
const eventParams = Object.fromEntries(EVENTS.map((e) => [e, Opt(Bool({ description: `notify on ${e} (custom level)` }))]));

function eventsOf(input: Record<string, unknown>): Partial<Record<EventName, boolean>> {
  const out: Partial<Record<EventName, boolean>> = {};
  for (const e of EVENTS) if (typeof input[e] === 'boolean') out[e] = input[e] as boolean;
  return out;
}

/** A group or project the caller can read (404 otherwise); any reader may set their own notifications. */
const lookup = (kind: 'group' | 'project') => (kind === 'group' ? { group: { ability: 'read_group' as const } } : { project: { ability: 'read_project' as const } });
function sourceOf(req: ApiRequest<any>, kind: 'group' | 'project'): Source {
  return kind === 'group' ? { type: 'Namespace', id: req.group.group.id } : { type: 'Project', id: req.project.project.id };
}

function scoped(kind: 'group' | 'project'): RouteDef<any>[] {
  const url = `/${kind}s/:id/notification_settings`;
  return [
    {
      method: 'GET', url, summary: `Your notification setting for a ${kind}`, tags, access: 'authenticated', ...lookup(kind),
      response: NotificationSetting,
      input: Input({ id: IdOrPath() }),
      handler: async (req) => {
        const source = await sourceOf(req, kind);
        return notificationSettingJson(await getNotificationSetting(req.server, req.actor.user!.id, source), source);
      },
    },
    {
      method: 'PUT', url, summary: `Change your notification setting for a ${kind}`, tags, access: 'authenticated', ...lookup(kind),
      response: NotificationSetting,
      input: Input({ id: IdOrPath(), level, ...eventParams }),
      handler: async (req) => {
        const source = await sourceOf(req, kind);
        const setting = await updateNotificationSetting(req.server, req.actor.user!, source, { level: req.input.level, events: eventsOf(req.input) });
        return notificationSettingJson(setting, source);
      },
    },
  ];
}

export const notificationSettingRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/notification_settings', summary: 'Your global notification setting', tags, access: 'authenticated',
    response: NotificationSetting,
    handler: async (req) => notificationSettingJson(await getNotificationSetting(req.server, req.actor.user!.id, GLOBAL), GLOBAL, req.actor.user!.email),
  },
  {
    method: 'PUT', url: '/notification_settings', summary: 'Change your global notification setting', tags, access: 'authenticated',
    response: NotificationSetting,
    input: Input({ level, notification_email: Opt(Str({ description: 'one of your verified e-mail addresses' })), ...eventParams }),
    handler: async (req) => {
      const user = req.actor.user!;
      const setting = await updateNotificationSetting(req.server, user, GLOBAL, {
        level: req.input.level, notification_email: req.input.notification_email, events: eventsOf(req.input),
      });
      return notificationSettingJson(setting, GLOBAL, user.email);
    },
  },
  ...scoped('group'),
  ...scoped('project'),
];
