import type { RouteDef } from '../../http/route.ts';
import { Metadata, Version } from './metadata.schemas.ts';

// What clients read first to learn which server they talk to. The version is that of the API level Bellows
// follows, so that clients which gate features on it (python-gitlab, gitbeaker, terraform) enable them.
export const API_COMPATIBLE_VERSION = '15.11.0';
export const REVISION = 'bellows';

export const metadataRoutes: RouteDef<any>[] = [
  {
    method: 'GET', url: '/version', summary: 'Server version', tags: ['metadata'], access: 'authenticated', scopes: ['read_user'],
    response: Version,
    handler: async () => ({ version: API_COMPATIBLE_VERSION, revision: REVISION }),
  },
  {
    method: 'GET', url: '/metadata', summary: 'Server metadata', tags: ['metadata'], access: 'authenticated', scopes: ['read_user'],
    response: Metadata,
    handler: async () => ({
      version: API_COMPATIBLE_VERSION,
      revision: REVISION,
      kas: { enabled: false, externalUrl: null, version: null },
      enterprise: false,
    }),
  },
];
