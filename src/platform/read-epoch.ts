import type { Db } from './db/index.ts';

// The read epoch: one number the database moves with every committed change to the tables that decide who a caller
// is and what they may reach (tokens, users, memberships, namespaces, projects, group shares; a token's last use
// aside), whoever makes it: this server, another machine, the command line. Triggers move it (migration 0036).
//
// A state-changing request reads it once, as it begins, instead of reading its caller afresh: the read caches of
// those tables (declared with `epoch`, see read-cache.ts) serve it what they loaded at the same epoch, within
// their window. Loaded after the epoch was read, a value is at least that new; nothing older can carry the number.

/** The tables whose changes move the epoch; the read caches declared with `epoch` read nothing else. */
export const EPOCH_TABLES: readonly string[] = [
  'personal_access_tokens', 'oauth_access_tokens', 'users', 'members', 'namespaces', 'projects', 'project_group_links', 'group_group_links',
];

/**
 * The current read epoch; undefined when its row is gone (a database emptied by hand), which the triggers then cannot
 * move: nothing is reused by epoch.
 */
export async function readEpoch(db: Db): Promise<number | undefined> {
  const row = await db.selectFrom('read_epoch').select('value').where('id', '=', 1).executeTakeFirst();
  // A bigint on PostgreSQL, read as a string.
  return row ? Number(row.value) : undefined;
}
