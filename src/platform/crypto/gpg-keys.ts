import { createHash } from 'node:crypto';

// Just enough OpenPGP (RFC 4880) to know a public key: its armor, its first packet (the primary public key) and
// the version 4 fingerprint and key id computed from it.

export interface ParsedGpgKey {
  /** 40 upper-case hex digits. */
  fingerprint: string;
  /** The last 16 hex digits of the fingerprint. */
  primaryKeyId: string;
}

const BEGIN = '-----BEGIN PGP PUBLIC KEY BLOCK-----';
const END = '-----END PGP PUBLIC KEY BLOCK-----';
export const GPG_KEY_MAX = 100_000;

/** The bytes inside an ASCII armor with the given BEGIN/END lines, or null. */
function dearmor(text: string, begin: string, end: string): Buffer | null {
  if (text.length > GPG_KEY_MAX) return null;
  const t = text.trim().replace(/\r\n/g, '\n');
  if (!t.startsWith(begin) || !t.endsWith(end)) return null;
  const body = t.slice(begin.length, t.length - end.length).split('\n');
  // Armor headers ("Comment: ...") end at the first empty line; the checksum line starts with "=".
  const blank = body.findIndex((l, i) => i > 0 && l.trim() === '');
  const lines = (blank >= 0 ? body.slice(blank + 1) : body).map((l) => l.trim()).filter((l) => l && !l.startsWith('='));
  const b64 = lines.join('');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
  return Buffer.from(b64, 'base64');
}

/**
 * The key id (16 upper-case hex digits) that made an armored OpenPGP signature, from the signature packet's
 * issuer (or issuer fingerprint) subpacket; version 3 signatures carry it in the packet itself. Null if unreadable.
 */
export function signatureKeyId(text: string): string | null {
  const bytes = dearmor(text, '-----BEGIN PGP SIGNATURE-----', '-----END PGP SIGNATURE-----');
  const packet = bytes && firstPacket(bytes);
  if (!packet || packet.tag !== 2) return null;
  const b = packet.body;
  if (b[0] === 3) return b.length >= 15 ? b.subarray(7, 15).toString('hex').toUpperCase() : null;
  if (b[0] !== 4 || b.length < 6) return null;
  const hashedLen = b.readUInt16BE(4);
  const hashed = b.subarray(6, 6 + hashedLen);
  const unhashedAt = 6 + hashedLen;
  const unhashed = b.length >= unhashedAt + 2 ? b.subarray(unhashedAt + 2, unhashedAt + 2 + b.readUInt16BE(unhashedAt)) : Buffer.alloc(0);
  for (const area of [hashed, unhashed]) {
    for (let i = 0; i < area.length; ) {
      const l0 = area[i];
      let len: number;
      let at: number;
      if (l0 < 192) [len, at] = [l0, i + 1];
      else if (l0 < 255) [len, at] = [((l0 - 192) << 8) + area[i + 1] + 192, i + 2];
      else [len, at] = [area.readUInt32BE(i + 1), i + 5];
      if (len < 1 || at + len > area.length) break;
      const type = area[at] & 0x7f;
      const data = area.subarray(at + 1, at + len);
      if (type === 16 && data.length === 8) return data.toString('hex').toUpperCase();
      if (type === 33 && data.length === 21) return data.subarray(13).toString('hex').toUpperCase();
      i = at + len;
    }
  }
  return null;
}

export function parseGpgPublicKey(text: string): ParsedGpgKey | null {
  const bytes = dearmor(text, BEGIN, END);
  if (!bytes) return null;
  const packet = firstPacket(bytes);
  if (!packet || packet.tag !== 6 || packet.body.length < 6 || packet.body[0] !== 4) return null;
  const head = Buffer.from([0x99, packet.body.length >> 8, packet.body.length & 0xff]);
  const fingerprint = createHash('sha1').update(head).update(packet.body).digest('hex').toUpperCase();
  return { fingerprint, primaryKeyId: fingerprint.slice(-16) };
}

function firstPacket(b: Buffer): { tag: number; body: Buffer } | null {
  if (b.length < 2 || (b[0] & 0x80) === 0) return null;
  if (b[0] & 0x40) {
    // New format: one-, two- or five-octet lengths (partial lengths are not used for keys).
    const tag = b[0] & 0x3f;
    const l0 = b[1];
    let len: number;
    let at: number;
    if (l0 < 192) [len, at] = [l0, 2];
    else if (l0 < 224) [len, at] = [((l0 - 192) << 8) + b[2] + 192, 3];
    else if (l0 === 255) [len, at] = [b.readUInt32BE(2), 6];
    else return null;
    return at + len <= b.length ? { tag, body: b.subarray(at, at + len) } : null;
  }
  const tag = (b[0] >> 2) & 0x0f;
  const type = b[0] & 0x03;
  if (type === 3) return null;
  const size = [1, 2, 4][type];
  if (b.length < 1 + size) return null;
  const len = size === 1 ? b[1] : size === 2 ? b.readUInt16BE(1) : b.readUInt32BE(1);
  const at = 1 + size;
  return at + len <= b.length ? { tag, body: b.subarray(at, at + len) } : null;
}
