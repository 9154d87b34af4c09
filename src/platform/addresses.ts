import { isIP } from 'node:net';

// Whether a caller's address is on an allowlist of CIDR ranges (the monitoring probes). Whether an address the
// server would connect to, or a link a user gives, is local is decided by `outbound-url.ts`.

/** Whether `ip` (an IPv4-mapped IPv6 address counts as its IPv4 address) is inside one of the CIDR entries. */
export function ipAllowed(ip: string, allowlist: readonly string[]): boolean {
  const addr = unmapped(ip);
  return allowlist.some((entry) => cidrMatch(addr, entry));
}

function unmapped(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1];
  // The URL parser writes a mapped address in hexadecimal (::ffff:7f00:1).
  const h = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (h) {
    const n = (parseInt(h[1], 16) << 16 >>> 0) + parseInt(h[2], 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }
  return ip;
}

export function cidrMatch(ip: string, cidr: string): boolean {
  const [range, bitsRaw] = cidr.split('/');
  const fam = isIP(ip);
  if (!fam || fam !== isIP(range)) return false;
  const bits = bitsRaw === undefined ? (fam === 4 ? 32 : 128) : Number(bitsRaw);
  const a = toBigInt(ip, fam);
  const b = toBigInt(range, fam);
  const width = fam === 4 ? 32 : 128;
  const mask = bits === 0 ? 0n : ((1n << BigInt(bits)) - 1n) << BigInt(width - bits);
  return (a & mask) === (b & mask);
}

function toBigInt(ip: string, fam: number): bigint {
  if (fam === 4) return ip.split('.').reduce((acc, o) => (acc << 8n) + BigInt(Number(o)), 0n);
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const parts = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return parts.reduce((acc, p) => (acc << 16n) + BigInt(parseInt(p || '0', 16)), 0n);
}
