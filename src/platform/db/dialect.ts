import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';

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

/** A unique-index violation, whichever database raised it (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Largest value of an `integer` column (PostgreSQL int4); a larger id cannot exist, and PostgreSQL refuses to compare with it. */
export const MAX_INT_COLUMN = 2_147_483_647;

export function fitsIntColumn(n: number): boolean {
  return Number.isSafeInteger(n) && n >= -MAX_INT_COLUMN - 1 && n <= MAX_INT_COLUMN;
}

/**
 * Text matching with LIKE, the one way every query builds it. The user's term is taken literally: its wildcards
 * are escaped, and the ESCAPE clause is spelled out because SQLite has no default escape character (PostgreSQL's
 * is the backslash), so without it `_` would match nothing on SQLite. Both sides are lower-cased.
 */
export function likeEscape(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type Matched = string | Expression<unknown>;
const operand = (column: Matched) => (typeof column === 'string' ? sql.ref(column) : column);

/** `column` contains `term`, case-insensitively. */
export function containsText(column: Matched, term: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`lower(${operand(column)}) like ${`%${likeEscape(term.toLowerCase())}%`} escape '\\'`;
}

/** `column` begins with `prefix`, case-insensitively. */
export function startsWithText(column: Matched, prefix: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`lower(${operand(column)}) like ${`${likeEscape(prefix.toLowerCase())}%`} escape '\\'`;
}

/** The text value of `key` in a column holding a JSON object (null when absent): `json_extract` on SQLite, `->>` on PostgreSQL. */
export function jsonTextField(dialect: DialectName, column: string, key: string): RawBuilder<string | null> {
  return dialect === 'postgres'
    ? sql<string | null>`(${sql.ref(column)}::jsonb ->> ${key})`
    : sql<string | null>`json_extract(${sql.ref(column)}, ${`$.${key}`})`;
}
