// One commit format shared by `git log` and `git for-each-ref`, so branches, tags and history parse the same way.
// Fields end in NUL (git refuses NUL in commit messages), so any message text parses safely.
import { runGit } from './command.ts';

/** The fields of the API commit entity, in its names. Dates are ISO 8601 with the commit's own UTC offset. */
export interface CommitInfo {
  id: string;
  short_id: string;
  created_at: string;
  parent_ids: string[];
  title: string;
  message: string;
  author_name: string;
  author_email: string;
  authored_date: string;
  committer_name: string;
  committer_email: string;
  committed_date: string;
  /** Last value per key, as the API's `trailers`. */
  trailers: Record<string, string>;
  /** Every value per key, as the API's `extended_trailers`. */
  extended_trailers: Record<string, string[]>;
}

// Trailer entries are split by RS and key/value by US; git normalises "Key : v" and folded lines for us.
const TRAILERS = 'only,unfold,separator=%x1e,key_value_separator=%x1f';

// [git log placeholder, for-each-ref atom]
const FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['%H', 'objectname'],
  ['%P', 'parent'],
  ['%an', 'authorname'],
  ['%ae', 'authoremail:trim'],
  ['%aI', 'authordate:iso-strict'],
  ['%cn', 'committername'],
  ['%ce', 'committeremail:trim'],
  ['%cI', 'committerdate:iso-strict'],
  ['%B', 'contents'],
  [`%(trailers:${TRAILERS})`, `contents:trailers:${TRAILERS}`],
];

export const COMMIT_FIELDS = FIELDS.length;

/** `--format` for git log: each field NUL-terminated, each record newline-terminated. */
export const LOG_FORMAT = `tformat:${FIELDS.map(([p]) => `${p}%x00`).join('')}`;

/** for-each-ref atoms for the commit a ref points at; `peeled` reads through annotated tags. */
export function refCommitAtoms(peeled: boolean): string {
  return FIELDS.map(([, atom]) => `%(${peeled ? '*' : ''}${atom})%00`).join('');
}

/** Splits NUL-terminated, newline-separated records of `width` fields. */
export function splitRecords(out: Buffer | string, width: number): string[][] {
  const parts = (typeof out === 'string' ? out : out.toString('utf8')).split('\0');
  const records: string[][] = [];
  for (let i = 0; i + width <= parts.length; i += width) {
    const rec = parts.slice(i, i + width);
    if (i > 0 && rec[0].startsWith('\n')) rec[0] = rec[0].slice(1);
    records.push(rec);
  }
  return records;
}

export function parseTrailerText(text: string): Pick<CommitInfo, 'trailers' | 'extended_trailers'> {
  const trailers: Record<string, string> = {};
  const extended: Record<string, string[]> = {};
  for (const entry of text.split('\x1e')) {
    const cut = entry.indexOf('\x1f');
    if (cut <= 0) continue;
    const key = entry.slice(0, cut);
    const value = entry.slice(cut + 1);
    trailers[key] = value;
    (extended[key] ??= []).push(value);
  }
  return { trailers, extended_trailers: extended };
}

/** The API's title: the first line of the message, or a fixed text for a blank message. */
export function commitTitle(message: string): string {
  if (message.trim() === '') return 'No commit message';
  return message.split(/[\r\n]/, 1)[0];
}

/** Builds a CommitInfo from the COMMIT_FIELDS fields starting at `offset`. */
export function toCommitInfo(f: string[], offset = 0): CommitInfo {
  const [id, parents, an, ae, ad, cn, ce, cd, message, trailerText] = f.slice(offset, offset + COMMIT_FIELDS);
  return {
    id,
    short_id: id.slice(0, 8),
    created_at: cd,
    parent_ids: parents ? parents.split(' ') : [],
    title: commitTitle(message),
    message,
    author_name: an,
    author_email: ae,
    authored_date: ad,
    committer_name: cn,
    committer_email: ce,
    committed_date: cd,
    ...parseTrailerText(trailerText),
  };
}

export function parseLog(out: Buffer): CommitInfo[] {
  return splitRecords(out, COMMIT_FIELDS).map((r) => toCommitInfo(r));
}

/** Trailers of a free-standing message, parsed by git itself the same way as for stored commits. */
export async function parseTrailers(message: string): Promise<Record<string, string>> {
  const { stdout } = await runGit(['interpret-trailers', '--parse', '--no-divider'], { input: message });
  const text = stdout
    .toString('utf8')
    .split('\n')
    .filter((l) => l.includes(':'))
    .map((l) => {
      const i = l.indexOf(':');
      return `${l.slice(0, i).trim()}\x1f${l.slice(i + 1).trim()}`;
    })
    .join('\x1e');
  return parseTrailerText(text).trailers;
}
