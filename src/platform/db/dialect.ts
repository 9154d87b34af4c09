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

/**
 * `column` is one of `ids`, the list bound as one parameter (SQLite: a JSON array read by `json_each`; PostgreSQL:
 * an integer array), so that the statement's text is the same whatever the list holds and is prepared once.
 */
export function inIdList(dialect: DialectName, column: string, ids: readonly number[]): RawBuilder<SqlBool> {
  return dialect === 'postgres'
    ? sql<SqlBool>`${sql.ref(column)} = any(${[...ids]}::integer[])`
    : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(ids)}))`;
}

/**
 * Marks a statement (in its text) as one PostgreSQL plans for the values of each execution. Our statements are
 * otherwise prepared once per connection by name (index.ts), and after five executions PostgreSQL may keep a
 * generic plan, made without the values; for a query whose best order depends on how common a value is (a search
 * term, which the trigram indexes may hold for a few rows or for a third of the table) that plan can be many times
 * slower than the one made for the values. Such a statement is sent unnamed instead: parsed and planned each time.
 */
export const PLANNED_FOR_VALUES = '/* planned for its values */';

/** `query`, planned for its values on every execution on PostgreSQL (see `PLANNED_FOR_VALUES`); unchanged on SQLite. */
export function plannedForValues<Q extends { modifyEnd(modifier: Expression<any>): Q }>(db: Kysely<any>, query: Q): Q {
  return dialectOf(db) === 'postgres' ? query.modifyEnd(sql.raw(PLANNED_FOR_VALUES)) : query;
}

/** The text value of `key` in a column holding a JSON object (null when absent): `json_extract` on SQLite, `->>` on PostgreSQL. */
export function jsonTextField(dialect: DialectName, column: string, key: string): RawBuilder<string | null> {
  return dialect === 'postgres'
    ? sql<string | null>`(${sql.ref(column)}::jsonb ->> ${key})`
    : sql<string | null>`json_extract(${sql.ref(column)}, ${`$.${key}`})`;
}

/**
 * A substring index over some text columns of a table, so that searches do not read every row: an FTS5 table
 * with the trigram tokenizer on SQLite (`<table>_search`, external content, kept current by triggers in the
 * writing transaction whoever writes, filled from the rows already there), trigram GIN indexes on the
 * lower-cased columns on PostgreSQL (pg_trgm serves `lower(col) like '%term%'`, the form `containsText` writes).
 */
export interface TextIndex {
  table: string;
  columns: readonly string[];
}

export async function createTextIndex(db: Kysely<any>, dialect: DialectName, index: TextIndex): Promise<void> {
  const { table, columns } = index;
  const fts = `${table}_search`;
  if (dialect === 'sqlite') {
    const cols = columns.join(', ');
    const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ');
    await sql.raw(`CREATE VIRTUAL TABLE ${fts} USING fts5(${cols}, content='${table}', content_rowid='id', tokenize='trigram')`).execute(db);
    await sql.raw(`CREATE TRIGGER ${fts}_ai AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${fts}(rowid, ${cols}) VALUES (new.id, ${values('new')}); END`).execute(db);
    await sql.raw(`CREATE TRIGGER ${fts}_ad AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${cols}) VALUES ('delete', old.id, ${values('old')}); END`).execute(db);
    await sql.raw(`CREATE TRIGGER ${fts}_au AFTER UPDATE OF ${cols} ON ${table} BEGIN
      INSERT INTO ${fts}(${fts}, rowid, ${cols}) VALUES ('delete', old.id, ${values('old')});
      INSERT INTO ${fts}(rowid, ${cols}) VALUES (new.id, ${values('new')}); END`).execute(db);
    await sql.raw(`INSERT INTO ${fts}(${fts}) VALUES ('rebuild')`).execute(db);
    return;
  }
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
  for (const c of columns) {
    await sql.raw(`CREATE INDEX IF NOT EXISTS ${table}_${c}_trgm ON ${table} USING gin (lower(${c}) gin_trgm_ops)`).execute(db);
  }
}

/**
 * `term` occurs, case-insensitively, in one of `index.columns` of the row of `index.table` (columns of the
 * table's index of `createTextIndex`, all or some). SQLite asks the trigram index for the rows holding the term (terms of three characters
 * or more; a shorter one has no trigram and is matched with LIKE); PostgreSQL's planner uses the trigram indexes.
 * `perRow`: each row the rest of the query reaches is read and matched with LIKE instead (see `indexedTermIsCommon`),
 * as a correlated condition, which SQLite checks after the query's other correlated conditions (label links, ...).
 */
export function indexedContains(db: Kysely<any>, index: TextIndex, term: string, opts: { perRow?: boolean } = {}): RawBuilder<SqlBool> {
  const { table, columns } = index;
  const like = (t: string) => sql<SqlBool>`(${sql.join(columns.map((c) => containsText(`${t}.${c}`, term)), sql` or `)})`;
  if (dialectOf(db) !== 'sqlite' || [...term].length < 3) return like(table);
  if (opts.perRow && perRowMatchesIndex(term)) {
    const row = sql.raw(`${table}_text`);
    return sql<SqlBool>`exists (select 1 from ${sql.table(table)} as ${row} where ${sql.ref(`${table}_text.id`)} = ${sql.ref(`${table}.id`)} and ${like(`${table}_text`)})`;
  }
  const fts = sql.raw(`${table}_search`);
  return sql<SqlBool>`${sql.ref(`${table}.id`)} in (select rowid from ${fts} where ${fts} match ${ftsPhrase(index, term)})`;
}

const ftsPhrase = ({ columns }: TextIndex, term: string) => `{${columns.join(' ')}} : "${term.replace(/"/g, '""')}"`;

/**
 * LIKE on lower-cased text and the trigram index agree on what holds a term when the term is printable ASCII
 * (both fold ASCII letters only then); other terms always go through the index.
 */
const perRowMatchesIndex = (term: string) => /^[\x20-\x7e]+$/.test(term);

/**
 * Whether the SQLite trigram index holds more than `limit` rows with `term` (reading at most `limit + 1` of them).
 * Taking a common term's rows from the index costs more than matching the rows of a query bounded otherwise (one
 * project's issues): such a query asks `indexedContains(..., { perRow: true })`. Always false on PostgreSQL, whose
 * planner weighs the trigram indexes itself, and for terms the index does not serve.
 */
export async function indexedTermIsCommon(db: Kysely<any>, index: TextIndex, term: string, limit: number): Promise<boolean> {
  if (dialectOf(db) !== 'sqlite' || [...term].length < 3 || !perRowMatchesIndex(term)) return false;
  const fts = sql.raw(`${index.table}_search`);
  const { rows } = await sql<{ n: number }>`select count(*) as n from (select rowid from ${fts} where ${fts} match ${ftsPhrase(index, term)} limit ${limit + 1})`.execute(db);
  return Number(rows[0]?.n ?? 0) > limit;
}
