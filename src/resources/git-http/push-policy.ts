// Which ref updates of a push are allowed, decided before receive-pack runs, in the reference's words.
// Fast-forward checks on protected branches need the pushed objects, so they are handed to the pre-receive
// hook (see hooks.ts) as a list of refs that must not be force-pushed.
import type { Db } from '../../platform/db/index.ts';
import type { PushCommand } from '../../platform/git/pktline.ts';
import { AccessLevel } from '../../platform/membership.ts';
import {
  canCreateTag, canPushBranch, forcePushAllowed, matching, type BranchRule, type Caller, type TagRule,
} from '../repository/protection.ts';

export const MESSAGES = {
  readOnly: 'The repository is temporarily read-only. Please try again later.',
  archived: 'You are not allowed to push code to an archived project.',
  pushCode: 'You are not allowed to push code to this project.',
  deployKeyPush: 'This deploy key does not have write access to this project.',
  downloadCode: 'You are not allowed to download code from this project.',
  pushScope: 'Your access token does not allow pushing: it needs the write_repository or api scope.',
  readScope: 'Your access token does not allow reading the repository: it needs the read_repository, write_repository or api scope.',
  protectedPush: 'You are not allowed to push code to protected branches on this project.',
  forcePush: 'You are not allowed to force push code to a protected branch on this project.',
  deleteDefault: 'The default branch of a project cannot be deleted.',
  deleteProtectedWeb: 'You can only delete protected branches using the web interface.',
  deleteProtected: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
  createProtectedTag: 'You are not allowed to create this tag as it is protected.',
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteProtectedTagWeb: 'You can only delete protected tags using the web interface.',
  deleteProtectedTag: 'You are not allowed to delete protected tags from this project. Only a project maintainer or owner can delete a protected tag.',
  otherRef: 'You can only push branches and tags.',
  readWiki: 'You are not allowed to read the wiki of this project.',
  pushWiki: 'You are not allowed to write to this project\'s wiki.',
  pushSnippet: 'You are not allowed to update this snippet.',
  notFound: "The project you were looking for could not be found or you don't have permission to view it.",
} as const;

export interface PushDecision {
  /** Refusal messages; any refusal declines the whole push. */
  refused: string[];
  /** Existing protected branches whose update must be a fast-forward. */
  noForce: string[];
}

const isZero = (sha: string) => /^0+$/.test(sha);

export async function decidePush(db: Db, o: {
  commands: PushCommand[];
  caller: Caller;
  branchRules: BranchRule[];
  tagRules: TagRule[];
  defaultBranch: string | null;
  /** A collaborator's push (not a writer of the project): the only branches it may update, never delete. */
  onlyBranches?: ReadonlySet<string>;
}): Promise<PushDecision> {
  const refused = new Set<string>();
  const noForce: string[] = [];
  for (const c of o.commands) {
    if (o.onlyBranches && !(c.ref.startsWith('refs/heads/') && o.onlyBranches.has(c.ref.slice('refs/heads/'.length)) && !isZero(c.newSha))) {
      refused.add(MESSAGES.pushCode);
      continue;
    }
    if (c.ref.startsWith('refs/heads/')) {
      const name = c.ref.slice('refs/heads/'.length);
      const rules = matching(o.branchRules, name);
      if (isZero(c.newSha)) {
        if (name === o.defaultBranch) refused.add(MESSAGES.deleteDefault);
        else if (rules.length) refused.add(o.caller.level >= AccessLevel.MAINTAINER ? MESSAGES.deleteProtectedWeb : MESSAGES.deleteProtected);
        continue;
      }
      if (rules.length === 0) continue;
      if (!(await canPushBranch(db, o.branchRules, name, o.caller))) {
        refused.add(MESSAGES.protectedPush);
        continue;
      }
      if (!isZero(c.oldSha) && !forcePushAllowed(rules)) noForce.push(c.ref);
    } else if (c.ref.startsWith('refs/tags/')) {
      const name = c.ref.slice('refs/tags/'.length);
      const rules = matching(o.tagRules, name);
      if (rules.length === 0) continue;
      if (isZero(c.newSha)) refused.add(o.caller.level >= AccessLevel.MAINTAINER ? MESSAGES.deleteProtectedTagWeb : MESSAGES.deleteProtectedTag);
      else if (!isZero(c.oldSha)) refused.add(MESSAGES.updateProtectedTag);
      else if (!(await canCreateTag(db, o.tagRules, name, o.caller))) refused.add(MESSAGES.createProtectedTag);
    } else {
      refused.add(MESSAGES.otherRef);
    }
  }
  return { refused: [...refused], noForce };
}
