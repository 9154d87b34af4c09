import type { Kysely } from 'kysely';
import type { DialectName } from '../dialect.ts';
import * as m0001 from './0001_core.ts';
import * as m0004 from './0004_repository.ts';

export interface VersionedMigration {
  name: string;
  up(db: Kysely<any>, dialect: DialectName): Promise<void>;
}

// Applied in this order, each once; add new files at the end with the next number.
export const migrations: VersionedMigration[] = [
  { name: '0001_core', up: m0001.up },
  { name: '0004_repository', up: m0004.up },
];
