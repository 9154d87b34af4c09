import type { Selectable } from 'kysely';
import type { UsersTable } from '../db/schema.ts';
import type { SpamParams } from '../spam/spam-check.ts';

// The caller as the access policy sees it. Credentials are resolved in the HTTP layer; the policy only reads
// who the caller is and whether they act as an administrator.

export type UserRow = Selectable<UsersTable>;

export type TokenKind = 'personal' | 'impersonation' | 'oauth';

/** A credential found by one of the resolvers, before its validity is checked. */
export interface ResolvedToken {
  kind: TokenKind;
  id: number;
  userId: number;
  scopes: string[];
  expiresAt: number | null;
  revoked: boolean;
}

export interface Actor {
  /** Whose permissions the request runs with (the sudo target when sudo is used). */
  user: UserRow | null;
  /** Effective administrator rights. */
  admin: boolean;
  token: ResolvedToken | null;
  /** How the caller signed in: a token, the web session, an SSH key (git over SSH), or not at all. */
  via: 'token' | 'session' | 'ssh' | 'none';
  sudo: boolean;
  /**
   * What the caller's request tells the spam check (platform/spam): where it came from and a CAPTCHA retry's headers.
   * Absent for work that is no user's request (then nothing is checked).
   */
  spam?: SpamParams;
  /**
   * The read epoch a state-changing request began at (platform/read-epoch.ts), when it came with a token: what it
   * reads about its project and its access may come from what the read caches loaded at that epoch.
   */
  epoch?: number;
}

export const anonymous: Actor = Object.freeze({ user: null, admin: false, token: null, via: 'none', sudo: false }) as Actor;

/** The server itself, in scheduled work (an iteration roll-over): administrator rights, and nobody as the author of what it writes. */
export const serverActor: Actor = Object.freeze({ user: null, admin: true, token: null, via: 'none', sudo: false }) as Actor;

/** A user acting without a request (a merge finished in the background, a notification's read check). */
export function actorOf(user: UserRow): Actor {
  return { user, admin: !!user.admin, token: null, via: 'none', sudo: false };
}
