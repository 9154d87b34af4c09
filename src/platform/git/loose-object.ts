// Loose objects written by the repository object itself, as git writes them: `<type> <size>\0<body>` deflated into
// `objects/<2 hex>/<38 hex>`, by way of a temporary file in the same directory that is linked (or renamed) into
// place, so a reader sees the whole object or none, and a process killed mid-way leaves only a `tmp_obj_*` file,
// which git's own clean-up removes as it removes its own. Used where starting a git process would cost more than the
// object (a merge's commit); git still reads and checks every object it is given afterwards (`update-ref` refuses
// a branch that would not name a commit).
import { createHash, randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { link, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const SHA1_HEX = /^[0-9a-f]{40}$/;

/** Where a SHA-1 object lives as a loose object. */
export function looseObjectPath(gitDir: string, sha: string): string {
  return join(gitDir, 'objects', sha.slice(0, 2), sha.slice(2));
}

/** Whether a SHA-1 object is in the repository as a loose object (packed ones answer false: ask git then). */
export async function hasLooseObject(gitDir: string, sha: string): Promise<boolean> {
  if (!SHA1_HEX.test(sha)) return false;
  return lstat(looseObjectPath(gitDir, sha)).then((st) => st.isFile() && st.size > 0, () => false);
}

/**
 * Writes one object of a SHA-1 repository and answers its id. Compression level 1 is git's default for loose
 * objects (`core.looseCompression`); any level reads the same. An object already there is kept as it is.
 */
export async function writeLooseObject(gitDir: string, type: 'commit' | 'tree' | 'blob' | 'tag', body: Buffer): Promise<string> {
  const whole = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, 'latin1'), body]);
  const sha = createHash('sha1').update(whole).digest('hex');
  const final = looseObjectPath(gitDir, sha);
  const dir = join(gitDir, 'objects', sha.slice(0, 2));
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`);
  const file = await open(tmp, 'wx', 0o444);
  try {
    await file.writeFile(deflateSync(whole, { level: 1 }));
  } finally {
    await file.close();
  }
  try {
    await link(tmp, final);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // EEXIST: the same object is there already (same id, same content). Without hard links, a rename does.
    if (code !== 'EEXIST') {
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EMLINK') return rename(tmp, final).then(() => sha);
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }
  await unlink(tmp).catch(() => undefined);
  return sha;
}
