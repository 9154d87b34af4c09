import { isIP } from 'node:net';

// Network addresses, decided in one place: whether an address is on an allowlist of CIDR ranges (the monitoring
// probes), and whether a URL points at this machine or a private network (URLs people give that others follow).

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

/** This machine: loopback, the unspecified address. */
const LOCALHOST = ['127.0.0.0/8', '0.0.0.0/8', '::1/128', '::/128'];
/** Private, link-local, shared and other non-public ranges (RFC 1918, 6598, 3927, 4193, 4291, 6890). */
const LOCAL_NETWORK = [
  '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '192.0.0.0/24', '198.18.0.0/15',
  '224.0.0.0/4', '240.0.0.0/4', 'fc00::/7', 'fe80::/10', 'ff00::/8',
];

export type UrlProblem = 'invalid' | 'scheme' | 'localhost' | 'local_network';

/**
 * Why a URL given by a user may not be kept as a public link, or null when it may: only http(s), and neither this
 * machine (`localhost` and its subdomains, loopback addresses in any spelling the URL parser accepts) nor a
 * private network. Host names are not resolved: Bellows never follows these URLs itself (see docs/decisions.md).
 */
export function publicUrlProblem(raw: string): UrlProblem | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'invalid';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'scheme';
  let host = u.hostname.toLowerCase();
  if (!host) return 'invalid';
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  host = host.replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'localhost';
  if (!isIP(host)) return null;
  const ip = unmapped(host);
  if (LOCALHOST.some((c) => cidrMatch(ip, c))) return 'localhost';
  if (LOCAL_NETWORK.some((c) => cidrMatch(ip, c))) return 'local_network';
  return null;
}
