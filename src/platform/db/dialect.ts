import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';

export type DialectName = 'sqlite' | 'postgres';

/** Every difference between the two databases is named here, nowhere else. */
export function idColumn<T extends string>(table: CreateTableBuilder<T, never>, dialect: DialectName) {
  return dialect === 'postgres'
    ? table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().generatedByDefaultAsIdentity())
    : table.addColumn('id', 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement());
}

/** Column type for epoch-millisecond datetimes: 64-bit on PostgreSQL (parsed back to number), INTEGER on SQLite. */
export function timeType(dialect: DialectName) {
  return dialect === 'postgres' ? ('bigint' as const) : ('integer' as const);
}

export function dialectOf(db: Kysely<any>): DialectName {
  return (db as any).__dialect as DialectName;
}

/** Whether a failed statement broke a unique index (a concurrent insert of the same key). */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
