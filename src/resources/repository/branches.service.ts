// Branches: listing from the cached refs (a constant number of git calls per page, none on a cache hit),
// creation from a branch or a sha, deletion with the reference's refusals, and the merged-branches sweep.
import RE2 from 're2';
import type { ServiceDeps } from '../../platform/deps.ts';
import type { ProjectRow } from '../../platform/membership.ts';
import { AccessLevel } from '../../platform/membership.ts';
import { derivedFromSnapshot, type Repository, type RefEntry, type RefSnapshot } from '../../platform/git/repository.ts';
import { isValidBranchName } from '../../platform/git/refs.ts';
import { RefExistsError, RefMovedError } from '../../platform/git/errors.ts';
import { NotFoundError, ParamError, RuleError } from '../../platform/errors.ts';
import {
  cachedBranchRules, canPushBranch, developersCan, loadBranchRules, matching, type BranchRule, type Caller,
} from './protection.ts';
import { afterRefsChanged, assertRefLength, defaultBranchOf, emitRefEvents } from './repository.common.ts';
import { SHA1_ZERO } from '../../platform/git/refs.ts';
import { commitFiles } from './repository.service.ts';
import type { UserRow } from '../../http/auth.ts';

export interface BranchListInput {
  search?: string;
  regex?: string;
  sort?: 'name_asc' | 'updated_asc' | 'updated_desc';
  page_token?: string;
}

/** search: "^term" prefix, "term$" suffix, otherwise a substring with the exact match first; all case-insensitive. */
export function filterBranches(list: RefEntry[], input: BranchListInput, snap?: RefSnapshot): RefEntry[] {
  if (!snap || (!input.search && !input.regex)) return filterUncached(list, input);
  // Listing pages repeat the same search; a snapshot remembers its last few filter results.
  const key = JSON.stringify([input.search ?? '', input.regex ?? '', input.sort ?? '', input.page_token ?? '']);
  return derivedFromSnapshot(snap, `filter\0${key}`, () => filterUncached(list, input));
}

function filterUncached(list: RefEntry[], input: BranchListInput): RefEntry[] {
  let out = list;
  const search = input.search;
  if (search) {
    const s = search.toLowerCase();
    if (s.startsWith('^')) {
      const t = s.slice(1);
      out = out.filter((b) => b.lower.startsWith(t));
    } else if (s.endsWith('$')) {
      const t = s.slice(0, -1);
      out = out.filter((b) => b.lower.endsWith(t));
    } else {
      out = out.filter((b) => b.lower.includes(s));
      const exact = out.findIndex((b) => b.lower === s);
      if (exact > 0) out = [out[exact], ...out.slice(0, exact), ...out.slice(exact + 1)];
    }
  }
  if (input.regex) {
    let re: RE2;
    try {
      re = new RE2(input.regex);
    } catch {
      throw ParamError.of('regex', 'invalid');
    }
    out = out.filter((b) => re.test(b.name));
  }
  if (input.sort === 'updated_asc' || input.sort === 'updated_desc') {
    const dir = input.sort === 'updated_asc' ? 1 : -1;
    out = [...out].sort((a, b) => dir * (Date.parse(a.commit.committed_date) - Date.parse(b.commit.committed_date)) || (a.name < b.name ? -1 : 1));
  }
  if (input.page_token) {
    const at = out.findIndex((b) => b.name === input.page_token);
    out = at >= 0 ? out.slice(at + 1) : out.filter((b) => b.name > input.page_token!);
  }
  return out;
}

export interface BranchView {
  entry: RefEntry;
  merged: boolean;
  protected: boolean;
  default: boolean;
  developers_can_push: boolean;
  developers_can_merge: boolean;
  can_push: boolean;
}

/** Everything the presenter needs for a page of branches: one merged-set lookup and the rules, whatever the page size. */
export async function describeBranches(
  deps: ServiceDeps, project: ProjectRow, repo: Repository, entries: RefEntry[], caller: Caller, rules?: BranchRule[],
): Promise<BranchView[]> {
  if (entries.length === 0) return [];
  const [allRules, def] = await Promise.all([rules ?? cachedBranchRules(deps, project.id), defaultBranchOf(project, repo)]);
  const merged = def ? await repo.mergedBranches(def) : new Set<string>();
  return Promise.all(entries.map(async (entry) => {
    const m = matching(allRules, entry.name);
    return {
      entry,
      merged: merged.has(entry.name),
      protected: m.length > 0,
      default: entry.name === def,
      developers_can_push: developersCan(m, 'push'),
      developers_can_merge: developersCan(m, 'merge'),
      can_push: await canPushBranch(deps.db, allRules, entry.name, caller),
    };
  }));
}

export function assertBranchName(name: string): void {
  if (!isValidBranchName(name)) throw new RuleError('bad_request', 'The branch refname is invalid');
}

export async function findBranch(repo: Repository, name: string): Promise<RefEntry> {
  assertBranchName(name);
  const snap = await repo.branches();
  const b = snap.byName.get(name);
  if (!b) throw new NotFoundError('Branch');
  return b;
}

/**
 * POST /repository/branches: `ref` is a branch name or a commit sha (tags and other revisions resolve too). In an
 * empty repository the default branch is made first, with an empty README.md, as the reference does.
 */
export async function createBranch(deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, user: UserRow, name: string, ref: string): Promise<RefEntry> {
  if (!ref || ref.trim() === '') throw new RuleError('bad_request', 'Ref is missing');
  assertRefLength(ref);
  if (!isValidBranchName(name)) throw new RuleError('bad_request', 'Branch name is invalid');
  let snap = await repo.branches();
  if (snap.byName.has(name)) throw new RuleError('bad_request', 'Branch already exists');
  const rules = await loadBranchRules(deps.db, project.id);
  if (!(await canPushBranch(deps.db, rules, name, caller))) {
    throw new RuleError('forbidden', '403 Forbidden');
  }
  if (snap.list.length === 0) {
    const main = project.default_branch ?? 'main';
    try {
      await commitFiles(deps, project, repo, caller, user, {
        branch: main, commit_message: 'Add README.md', actions: [{ action: 'create', file_path: 'README.md', content: '' }],
      });
    } catch (e) {
      // Another writer may have given the repository its first branch meanwhile; then there is nothing to make.
      if (!(e instanceof RuleError) || (await repo.branches()).list.length === 0) throw e;
    }
    snap = await repo.branches();
    if (snap.byName.has(name)) throw new RuleError('bad_request', 'Branch already exists');
  }
  const sha = snap.byName.get(ref)?.commit.id ?? (await repo.resolveCommit(ref));
  if (!sha) throw new RuleError('bad_request', `Failed to create branch '${name}': invalid reference name '${ref}'`);
  try {
    await repo.updateRef(`refs/heads/${name}`, sha, null);
  } catch (e) {
    // Only a branch found in the way is the caller's problem; any other failure is the server's (a logged 500).
    if (e instanceof RefExistsError || e instanceof RefMovedError) throw new RuleError('bad_request', 'Branch already exists');
    throw e;
  }
  await afterRefsChanged(deps, project, repo, [`refs/heads/${name}`]);
  await emitRefEvents(deps, project, null, caller.userId, [{ ref: `refs/heads/${name}`, before: SHA1_ZERO, after: sha }]);
  const created = (await repo.branches()).byName.get(name);
  if (!created) throw new RuleError('bad_request', `Failed to create branch '${name}'`);
  return created;
}

/** The refusals of the reference's DeleteService and pre-receive checks, in its words. */
export async function deleteBranch(deps: ServiceDeps, project: ProjectRow, repo: Repository, caller: Caller, entry: RefEntry): Promise<void> {
  if (caller.level < AccessLevel.DEVELOPER) throw new RuleError('not_allowed', 'You dont have push access to repo');
  const def = await defaultBranchOf(project, repo);
  if (entry.name === def) throw new RuleError('bad_request', 'The default branch of a project cannot be deleted.');
  const rules = await loadBranchRules(deps.db, project.id);
  if (matching(rules, entry.name).length > 0 && caller.level < AccessLevel.MAINTAINER) {
    throw new RuleError('bad_request', 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.');
  }
  try {
    await repo.deleteRef(`refs/heads/${entry.name}`, entry.commit.id);
  } catch (e) {
    if (e instanceof RefMovedError) throw new RuleError('bad_request', 'Failed to remove branch');
    throw e;
  }
  await afterRefsChanged(deps, project, repo, [`refs/heads/${entry.name}`]);
  await emitRefEvents(deps, project, null, caller.userId, [{ ref: `refs/heads/${entry.name}`, before: entry.commit.id, after: SHA1_ZERO }]);
}

/**
 * Deletes every branch merged into the default branch except the default branch itself and protected ones.
 * Each deletion is a compare-and-swap on the sha that was found merged, so a branch moved meanwhile stays.
 */
export async function deleteMergedBranches(deps: ServiceDeps, project: ProjectRow, repo: Repository): Promise<string[]> {
  const def = await defaultBranchOf(project, repo);
  if (!def) return [];
  const [snap, merged, rules] = await Promise.all([repo.branches(), repo.mergedBranches(def), loadBranchRules(deps.db, project.id)]);
  const doomed = snap.list.filter((b) => b.name !== def && merged.has(b.name) && matching(rules, b.name).length === 0);
  if (doomed.length === 0) return [];
  // One atomic transaction for all; if any branch moved meanwhile, fall back to one compare-and-swap each.
  const input = doomed.map((b) => `delete refs/heads/${b.name}\0${b.commit.id}\0`).join('');
  const all = await repo.git(['update-ref', '-z', '--stdin'], { input, okExitCodes: [128] });
  if (all.code !== 0) {
    for (const b of doomed) {
      await repo.deleteRef(`refs/heads/${b.name}`, b.commit.id).catch((e) => {
        if (!(e instanceof RefMovedError)) throw e;
      });
    }
  }
  await afterRefsChanged(deps, project, repo, doomed.map((b) => `refs/heads/${b.name}`));
  return doomed.map((b) => b.name);
}

