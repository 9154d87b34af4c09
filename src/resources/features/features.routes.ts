import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../../http/route.ts';
import { Bool, Input, Opt, Str } from '../../http/schemas.ts';
import { featureDefinitions } from '../../platform/features.ts';
import { listFeatures, removeFeature, setFeature } from './features.service.ts';
import { definitionJson, featureJson } from './features.presenter.ts';
import { Feature, FeatureDefinition } from './features.schemas.ts';

const tags = ['features'];
const Name = Str({ minLength: 1, maxLength: 255, description: 'feature flag name' });
const TargetList = (what: string) => Opt(Str({ description: `${what}, or several separated by commas` }));

export const featureRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/features', summary: 'List every persisted feature flag with its gates', tags, access: 'admin',
    response: Type.Array(Feature),
    handler: async (req) => (await listFeatures(req.server)).map((f) => featureJson(f.name, f.gates)),
  },
  {
    method: 'GET', url: '/features/definitions', summary: 'List every feature flag definition shipped with the server', tags, access: 'admin',
    response: Type.Array(FeatureDefinition),
    handler: async () => [...featureDefinitions().values()].map(definitionJson),
  },
  {
    method: 'POST', url: '/features/:name', summary: 'Set or create a feature flag gate', tags, access: 'admin',
    response: Feature,
    input: Input({
      name: Name,
      // `true`, `false`, or a percentage; JSON clients may send a boolean or a number.
      value: Type.Union([Type.String(), Type.Number(), Type.Boolean()], { description: '`true`, `false`, or a percentage' }),
      key: Opt(Str({ description: '`percentage_of_actors` or `percentage_of_time` (default)' })),
      feature_group: TargetList('a feature group name'),
      user: TargetList('a username'),
      group: TargetList("a group's full path"),
      namespace: TargetList("a user or group namespace's full path"),
      project: TargetList("a project's full path"),
      repository: TargetList('a repository path such as group/project.git'),
      force: Opt(Bool({ description: 'accepted for compatibility: unknown names are created without it' })),
    }),
    handler: async (req) => featureJson(req.input.name, await setFeature(req.server, req.input.name, req.input)),
  },
  {
    method: 'DELETE', url: '/features/:name', summary: 'Remove a feature flag and all its gates', tags, access: 'admin',
    response: null,
    input: Input({ name: Name }),
    handler: async (req) => {
      await removeFeature(req.server, req.input.name);
      return undefined;
    },
  },
];
