// Test support for storage moves (projects and snippets alike): the shards, an app that moves repositories between
// them and serves git over HTTP, with an administrator, and a move as the administrator reads it.
import { buildTestApp, call, listening, type TestApp } from '../../../test/support/app.ts';
import { quickUser, type TestUser } from '../../../test/support/fixtures.ts';
import type { Container } from './storage-moves.service.ts';

export const READ_ONLY = 'The repository is temporarily read-only. Please try again later.';

type Shard = { name: string; path: string; weight: number };

/** The shards `default` and `second` (weight 100 each), then `more`. */
export const shards = (...more: Shard[]): Shard[] => [
  { name: 'default', path: 'repositories', weight: 100 },
  { name: 'second', path: 'second', weight: 100 },
  ...more,
];

export interface MoveApp { t: TestApp; host: string; admin: TestUser }

/** A test app on `storage`, listening on a free port (`host` is its host:port, for git over HTTP), and an administrator. */
export async function moveApp(storage: Shard[]): Promise<MoveApp> {
  const t = await buildTestApp({ config: { storage } as any });
  const host = new URL(await listening(t)).host;
  return { t, host, admin: await quickUser(t.app, { admin: true }) };
}

/** The move `id` of a `kind` container as an administrator reads it: its `state`, `error_message`, .... */
export async function readMove(m: MoveApp, kind: Container, id: number): Promise<any> {
  return (await call(m.t.app, 'GET', `/${kind}_repository_storage_moves/${id}`, { token: m.admin.token })).body;
}
