import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (pw: string, salt: Buffer, len: number, opts: ScryptOptions) =>
  new Promise<Buffer>((res, rej) => scryptCb(pw, salt, len, opts, (e, k) => (e ? rej(e) : res(k))));

// PHC-style string so the cost can be raised later without invalidating stored hashes.
let LN = 15;
const R = 8;
const P = 1;

/** Cost of new hashes as log2(N); stored hashes keep the cost they were made with. */
export function configurePasswordHashing(ln: number): void {
  LN = ln;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32, { N: 2 ** LN, r: R, p: P, maxmem: 128 * 2 ** LN * R * 2 });
  return `$scrypt$ln=${LN},r=${R},p=${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!m) return false;
  const [ln, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const expected = Buffer.from(m[5], 'base64url');
  const key = await scrypt(password, Buffer.from(m[4], 'base64url'), expected.length, { N: 2 ** ln, r, p, maxmem: 128 * 2 ** ln * r * 2 });
  return timingSafeEqual(key, expected);
}
