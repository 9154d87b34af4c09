// Protocol v2 `command=ls-refs` answered without starting git: the refs are read from the repository's files
// (HEAD, packed-refs, loose refs), the same way `git upload-pack --stateless-rpc` reads them, and the answer is
// byte for byte what git would send (ls-refs.c and serve.c of git 2.39). Anything this code does not fully
// understand — an unknown argument or capability, hidden refs or includes in the configuration, a symbolic or
// broken ref, a detached HEAD, too many loose refs — makes it return null, and the caller hands the request to git.
//
// Read refs are kept per repository with stamps (HEAD, packed-refs, every directory and loose ref file under refs/):
// they are used again only while no stamp changed, so a ref moved by any process — through the server or behind its
// back — is seen at once. A stamp taken within RACY_MS of a change is not trusted (file times are coarse), as git treats a
// racily clean index.
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { inflateSync, constants as zlibConstants } from 'node:zlib';
import { gitEnv, runGit } from './command.ts';
import { readStreamHead } from './pktline.ts';
import { isValidRefName } from './refs.ts';
import { peekRefCache, storeRefCache } from './ref-cache.ts';
import { defineMemo } from '../read-cache.ts';

export interface LsRefsArgs {
  peel: boolean;
  symrefs: boolean;
  unborn: boolean;
  /** Byte strings (latin1), as git compares them. */
  prefixes: string[];
}

export type LsRefsParse =
  | { state: 'more' }
  /** Not an ls-refs request this module answers (another command, or anything unusual): git must see it. */
  | { state: 'other' }
  | { state: 'ls-refs'; args: LsRefsArgs };

/** Requests larger than this go to git (a real ls-refs request is a few hundred bytes). */
export const MAX_LS_REFS_REQUEST = 64 * 1024;
const MAX_PREFIXES = 1024;
const MAX_LOOSE_REFS = 2000;
const RACY_MS = 2000;
const MAX_MATCH_WORK = 2_000_000;
const MAX_SHOWN_REFS = 20_000;
const OID = /^[0-9a-f]{40}$/;
const NULL_OID = '0'.repeat(40);

/**
 * Reads a protocol v2 request from its first byte. `more` while the request is incomplete; `other` as soon as it is
 * anything but a well-formed ls-refs request made only of the lines git 2.39 accepts and this module reproduces.
 */
export function parseLsRefsRequest(buf: Buffer): LsRefsParse {
  let phase: 'keys' | 'args' = 'keys';
  let command = false;
  const args: LsRefsArgs = { peel: false, symrefs: false, unborn: false, prefixes: [] };
  for (let at = 0; ; ) {
    if (buf.length < at + 4) return buf.length > MAX_LS_REFS_REQUEST ? { state: 'other' } : { state: 'more' };
    const hex = buf.toString('latin1', at, at + 4);
    if (!/^[0-9a-f]{4}$/.test(hex)) return { state: 'other' };
    const len = parseInt(hex, 16);
    if (len === 0) {
      // A flush ends the arguments; among the keys it ends a request without arguments (the command then reads it).
      if (!command) return { state: 'other' };
      return { state: 'ls-refs', args };
    }
    if (len === 1) {
      if (phase !== 'keys' || !command) return { state: 'other' };
      phase = 'args';
      at += 4;
      continue;
    }
    if (len <= 4 || len > 65520) return { state: 'other' };
    if (buf.length < at + len) return buf.length > MAX_LS_REFS_REQUEST ? { state: 'other' } : { state: 'more' };
    let line = buf.toString('latin1', at + 4, at + len);
    at += len;
    // git reads lines as C strings and chomps one newline.
    if (line.includes('\0')) return { state: 'other' };
    if (line.endsWith('\n')) line = line.slice(0, -1);
    if (phase === 'keys') {
      if (line.startsWith('command=')) {
        if (command || line !== 'command=ls-refs') return { state: 'other' };
        command = true;
      } else if (!(line === 'agent' || line.startsWith('agent=') || line === 'server-option' || line.startsWith('server-option=') || line === 'object-format=sha1')) {
        return { state: 'other' };
      }
    } else if (line === 'peel') args.peel = true;
    else if (line === 'symrefs') args.symrefs = true;
    else if (line === 'unborn') args.unborn = true;
    else if (line.startsWith('ref-prefix ')) {
      args.prefixes.push(line.slice('ref-prefix '.length));
      if (args.prefixes.length > MAX_PREFIXES) return { state: 'other' };
    } else return { state: 'other' };
  }
}

// ---- configuration -------------------------------------------------------------------------------------------

interface ConfigFacts {
  stamp: string;
  /** False when the configuration holds anything that changes ls-refs beyond `unborn` (hidden refs, includes...). */
  plain: boolean;
  /** lsrefs.unborn: whether the `unborn` argument is honoured. */
  unborn: boolean;
}

const configFacts = defineMemo<string, ConfigFacts>('git-config-facts', { max: 1000 });
// Keys that change what ls-refs shows or how the configuration is read.
const CONFIG_KEYS = '^(uploadpack\\.hiderefs|transfer\\.hiderefs|lsrefs\\.unborn|extensions\\..*|include\\..*|includeif\\..*)$';

function statSig(path: string, now: number, racy: { value: boolean }): string {
  try {
    const s = statSync(path, { bigint: true });
    // Content changes move mtime (a rewritten file is also a new inode); ctime only adds to the comparison.
    if (Number(s.mtimeMs) >= now - RACY_MS) racy.value = true;
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.mode}`;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return '-';
    throw e;
  }
}

function configFiles(repoPath: string): string[] {
  const home = gitEnv().HOME!;
  return [join(repoPath, 'config'), join(home, '.gitconfig'), join(home, '.config', 'git', 'config')];
}

async function loadConfigFacts(repoPath: string): Promise<ConfigFacts> {
  const files = configFiles(repoPath);
  const now = Date.now();
  const racy = { value: false };
  const stamp = files.map((f) => statSig(f, now, racy)).join('|');
  const have = configFacts.get(repoPath);
  if (have && have.stamp === stamp) return have;
  const r = await runGit(['config', '-z', '--get-regexp', CONFIG_KEYS], { gitDir: repoPath, okExitCodes: [1] });
  let plain = true;
  let unborn = true;
  for (const rec of r.stdout.toString('latin1').split('\0')) {
    if (!rec) continue;
    const nl = rec.indexOf('\n');
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const value = nl < 0 ? null : rec.slice(nl + 1);
    if (key === 'lsrefs.unborn') {
      // The last value wins, as for git's single-valued lookups; anything but these three makes git die.
      if (value === 'advertise' || value === 'allow') unborn = true;
      else if (value === 'ignore') unborn = false;
      else plain = false;
    } else if (key === 'extensions.objectformat' && value?.toLowerCase() === 'sha1') {
      // The default, spelled out.
    } else plain = false;
  }
  const facts: ConfigFacts = { stamp, plain, unborn };
  if (!racy.value) {
    configFacts.set(repoPath, facts);
  }
  return facts;
}

// ---- refs ----------------------------------------------------------------------------------------------------

interface AdvertisedRef {
  name: string;
  oid: string;
  /** The fully peeled object for a tag, null for anything else; undefined until looked up. */
  peeled?: string | null;
}

export interface RefFiles {
  /** Stamps of HEAD, packed-refs and every directory and loose ref file under refs/, each taken before reading it. */
  stamps: Array<[string, string]>;
  reusable: boolean;
  /** HEAD's target (a full ref name); HEAD is always symbolic here. */
  head: string;
  /** Sorted by name in byte order, as git iterates. */
  refs: AdvertisedRef[];
  lookup(name: string): AdvertisedRef | undefined;
}

class Unsupported extends Error {}

function readHead(repoPath: string): string {
  const raw = readFileSync(join(repoPath, 'HEAD'), 'latin1').replace(/\s+$/, '');
  const m = /^ref:\s*(refs\/.+)$/.exec(raw);
  if (!m || !isValidRefName(m[1], { allowOneLevel: false })) throw new Unsupported();
  return m[1];
}

interface PackedRefs {
  /** Sorted by name. Shared by every snapshot read while packed-refs stays the same. */
  list: AdvertisedRef[];
  byName: Map<string, AdvertisedRef>;
}

const EMPTY_PACKED: PackedRefs = { list: [], byName: new Map() };
// Parsed packed-refs files by repository, with the stamp they were read under: a repository whose loose refs keep
// moving re-reads only those.
const packedCache = defineMemo<string, { sig: string; packed: PackedRefs }>('git-packed-refs', { max: 1000 });
const MAX_PACKED_BYTES = 8 * 1024 * 1024;

function readPackedRefs(repoPath: string, sig: string, reusable: boolean): PackedRefs {
  const have = packedCache.get(repoPath);
  if (have && have.sig === sig) return have.packed;
  let text: string;
  try {
    const buf = readFileSync(join(repoPath, 'packed-refs'));
    if (buf.length > MAX_PACKED_BYTES) throw new Unsupported();
    text = buf.toString('latin1');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_PACKED;
    throw e;
  }
  const byName = new Map<string, AdvertisedRef>();
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let traits: string[] = [];
  if (lines[0]?.startsWith('# pack-refs with:')) traits = lines.shift()!.slice('# pack-refs with:'.length).split(' ').filter(Boolean);
  const fully = traits.includes('fully-peeled');
  const tagsPeeled = fully || traits.includes('peeled');
  let last: AdvertisedRef | null = null;
  for (const line of lines) {
    if (line.startsWith('^')) {
      const peeled = line.slice(1);
      if (!last || !OID.test(peeled)) throw new Unsupported();
      last.peeled = peeled;
      last = null;
      continue;
    }
    const sp = line.indexOf(' ');
    const oid = line.slice(0, sp);
    const name = line.slice(sp + 1);
    if (sp !== 40 || !OID.test(oid) || oid === NULL_OID || !isValidRefName(name, { allowOneLevel: false }) || !name.startsWith('refs/')) throw new Unsupported();
    if (byName.has(name)) throw new Unsupported();
    // Without a peeled line the trait says the ref is not a tag; without the trait it is unknown.
    last = { name, oid, peeled: fully || (tagsPeeled && name.startsWith('refs/tags/')) ? null : undefined };
    byName.set(name, last);
  }
  const list = [...byName.values()].sort(byRefName);
  const packed = { list, byName };
  if (reusable) {
    packedCache.set(repoPath, { sig, packed });
  }
  return packed;
}

const byRefName = (a: AdvertisedRef, b: AdvertisedRef) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function loadRefFiles(repoPath: string): RefFiles {
  const now = Date.now();
  const racy = { value: false };
  const stamps: Array<[string, string]> = [];
  const stamp = (p: string) => {
    const sig = statSig(p, now, racy);
    stamps.push([p, sig]);
    return sig;
  };
  stamp(join(repoPath, 'HEAD'));
  const packedRacy = { value: false };
  const packedSig = statSig(join(repoPath, 'packed-refs'), now, packedRacy);
  stamps.push([join(repoPath, 'packed-refs'), packedSig]);
  if (packedRacy.value) racy.value = true;
  const head = readHead(repoPath);
  const packed = readPackedRefs(repoPath, packedSig, !packedRacy.value);
  const loose = new Map<string, AdvertisedRef>();
  // Each directory and file is stamped before it is read, so a change made meanwhile shows in the next stamp.
  // (git replaces a ref file by renaming, which the directory's stamp shows; the file's own stamp covers the rest.)
  const walk = (dir: string, prefix: string) => {
    stamp(dir);
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      // git skips these in a refs directory (loose_fill_ref_dir).
      if (e.name.startsWith('.') || e.name.endsWith('.lock')) continue;
      // Names are compared as bytes; a name outside printable ASCII is left to git rather than re-encoded.
      if (!/^[\x21-\x7e]+$/.test(e.name)) throw new Unsupported();
      const name = `${prefix}${e.name}`;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        walk(path, `${name}/`);
        continue;
      }
      if (!e.isFile() || loose.size >= MAX_LOOSE_REFS) throw new Unsupported();
      if (!isValidRefName(name, { allowOneLevel: false })) throw new Unsupported();
      stamp(path);
      const oid = readFileSync(path, 'latin1').replace(/\s+$/, '');
      // Symbolic refs, null and malformed values are left to git.
      if (!OID.test(oid) || oid === NULL_OID) throw new Unsupported();
      const under = packed.byName.get(name);
      loose.set(name, { name, oid, peeled: under?.oid === oid ? under.peeled : undefined });
    }
  };
  walk(join(repoPath, 'refs'), 'refs/');
  // Loose refs win over packed ones of the same name; both lists are sorted, so one merge keeps the order.
  let refs = packed.list;
  if (loose.size) {
    const extra = [...loose.values()].sort(byRefName);
    refs = [];
    let i = 0;
    for (const p of packed.list) {
      while (i < extra.length && extra[i].name < p.name) refs.push(extra[i++]);
      if (!loose.has(p.name)) refs.push(p);
    }
    while (i < extra.length) refs.push(extra[i++]);
  }
  const lookup = (name: string) => loose.get(name) ?? packed.byName.get(name);
  return { stamps, reusable: !racy.value, head, refs, lookup };
}

function stillCurrent(files: RefFiles): boolean {
  if (!files.reusable) return false;
  const now = Date.now();
  const racy = { value: false };
  for (const [path, sig] of files.stamps) if (statSig(path, now, racy) !== sig) return false;
  return true;
}

// ---- peeling -------------------------------------------------------------------------------------------------

// Object ids to their fully peeled object (null: not a tag). Objects never change, so this holds for good.
// '' stands for "not a tag" (a cache holds no nulls).
const peelCache = defineMemo<string, string>('git-peeled', { max: 100_000 });
const remember = (oid: string, peeled: string | null) => peelCache.set(oid, peeled ?? '');

/** The type of a loose object from its header, or null when the object is not loose (or unreadable). */
function looseObjectType(repoPath: string, oid: string): string | null {
  let fd: number;
  try {
    fd = openSync(join(repoPath, 'objects', oid.slice(0, 2), oid.slice(2)), 'r');
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(128);
    const n = readSync(fd, head, 0, head.length, 0);
    const out = inflateSync(head.subarray(0, n), { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const m = /^(commit|tree|blob|tag) \d+\0/.exec(out.toString('latin1', 0, Math.min(out.length, 32)));
    return m ? m[1] : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Fills `peeled` on the given refs: from packed-refs, the cache, loose object headers, then one git call. */
async function peelAll(repoPath: string, refs: AdvertisedRef[]): Promise<void> {
  const ask: AdvertisedRef[] = [];
  for (const r of refs) {
    if (r.peeled !== undefined) continue;
    const known = peelCache.get(r.oid);
    if (known !== undefined) {
      r.peeled = known || null;
      continue;
    }
    const type = looseObjectType(repoPath, r.oid);
    if (type && type !== 'tag') {
      remember(r.oid, null);
      r.peeled = null;
    } else ask.push(r);
  }
  if (!ask.length) return;
  // "<oid>^{}" peels tags fully and names anything else itself, as peel_object does for ls-refs.
  const oids = [...new Set(ask.map((r) => r.oid))];
  const { stdout } = await runGit(['cat-file', '--batch-check=%(objectname)'], { gitDir: repoPath, input: oids.map((o) => `${o}^{}\n`).join('') });
  const lines = stdout.toString('latin1').split('\n');
  const answers = new Map<string, string | null>();
  oids.forEach((oid, i) => {
    const line = lines[i] ?? '';
    if (OID.test(line)) {
      const peeled = line === oid ? null : line;
      answers.set(oid, peeled);
      remember(oid, peeled);
    } else answers.set(oid, null); // missing: git shows no peeled value either; not cached, it may arrive later
  });
  for (const r of ask) r.peeled = answers.get(r.oid) ?? null;
}

// ---- the answer ----------------------------------------------------------------------------------------------

function pkt(line: string): Buffer {
  const body = Buffer.from(line, 'latin1');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

/** The current refs of a repository, from the ref cache while its stamps hold; null when git must answer. */
export function refFiles(repoPath: string): RefFiles | null {
  const path = resolve(repoPath);
  const cached = peekRefCache<RefFiles>(path, 'files');
  if (cached && stillCurrent(cached)) return cached;
  let files: RefFiles;
  try {
    files = loadRefFiles(path);
  } catch (e) {
    if (e instanceof Unsupported || (e as NodeJS.ErrnoException).code) return null;
    throw e;
  }
  if (files.reusable) storeRefCache(path, 'files', files);
  return files;
}

/**
 * git's answer to an ls-refs request on this repository, or null when the request or the repository needs git
 * itself. The repository must use SHA-1 and the files ref backend (every repository this server creates does).
 */
export async function answerLsRefs(repoPath: string, args: LsRefsArgs): Promise<Buffer | null> {
  const path = resolve(repoPath);
  const config = await loadConfigFacts(path);
  if (!config.plain) return null;
  const files = refFiles(path);
  if (!files) return null;
  const { prefixes } = args;
  // Very large listings go to git, whose process does not hold up every other request of this one.
  if (files.refs.length * Math.max(1, prefixes.length) > MAX_MATCH_WORK) return null;
  const matches = (name: string) => prefixes.length === 0 || prefixes.some((p) => name.startsWith(p));
  const shown = files.refs.filter((r) => matches(r.name));
  if (shown.length > MAX_SHOWN_REFS) return null;
  const headRef = files.lookup(files.head);
  const showHead = matches('HEAD') && (headRef !== undefined || (args.unborn && config.unborn && args.symrefs));
  if (args.peel) await peelAll(path, headRef && showHead ? [headRef, ...shown] : shown);
  const out: Buffer[] = [];
  if (showHead) {
    let line = headRef ? `${headRef.oid} HEAD` : 'unborn HEAD';
    if (args.symrefs) line += ` symref-target:${files.head}`;
    if (args.peel && headRef?.peeled) line += ` peeled:${headRef.peeled}`;
    out.push(pkt(`${line}\n`));
  }
  for (const r of shown) out.push(pkt(args.peel && r.peeled ? `${r.oid} ${r.name} peeled:${r.peeled}\n` : `${r.oid} ${r.name}\n`));
  out.push(Buffer.from('0000'));
  return Buffer.concat(out);
}

/**
 * Reads a request body until parseLsRefsRequest decides (or the body ends), leaving the rest of the stream paused
 * and unread. `consumed` holds every byte read: when the answer is `other`, they must still reach git.
 */
export async function readLsRefsRequest(stream: Readable): Promise<{ consumed: Buffer; parse: LsRefsParse }> {
  const { value, consumed } = await readStreamHead<LsRefsParse>(stream, (bytes, ended) => {
    const parse = parseLsRefsRequest(bytes);
    if (parse.state !== 'more') return parse;
    // A request cut short is git's to refuse.
    return ended ? { state: 'other' } : undefined;
  });
  return { consumed, parse: value };
}
