import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { ServiceDeps } from './deps.ts';
import { applicationSettings, type SettingName } from './application-settings.ts';

// The one guard on addresses the server connects to on a user's behalf (repository imports, webhooks, alert metric
// images): the host is resolved, and every address it resolves to must be a public one unless the administrator
// allows local requests (application setting). The answer carries the address checked, and the connection is made
// to that address (`gitPinning`, `pinnedLookup`), so a name that resolves elsewhere the second time (DNS rebinding)
// cannot reach what the check refused. The reasons are the reference's (Gitlab::UrlBlocker), shown after
// "is blocked: ".

/** Why a URL is refused; `message` is the reference's sentence. */
export class BlockedUrlError extends Error {
  override name = 'BlockedUrlError';
}

export interface OutboundTarget {
  /** The URL as given, without user name and password. */
  url: URL;
  /** User name and password of the URL, if any (never to be shown or logged). */
  username: string;
  password: string;
  /** The host name as given (brackets removed for IPv6). */
  host: string;
  port: number;
  /** The address checked, to connect to. */
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface GuardOptions {
  /** Allowed URL schemes, without the colon. */
  schemes: readonly string[];
  /** The application setting that lets local addresses through. */
  allowLocal: SettingName & `allow_local_requests_${string}`;
  /** Resolves the host (default: the system resolver, or the one `setResolver` set). */
  resolver?: Resolver;
}

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, git: 9418, ssh: 22 };

let resolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });
/** Tests resolve names their own way (answers returned to a name the machine cannot resolve). */
export function setResolver(r: Resolver | null): void {
  resolver = r ?? ((host) => lookup(host, { all: true, verbatim: true }));
}

function ranges(list: Array<[string, number, 'ipv4' | 'ipv6']>): BlockList {
  const b = new BlockList();
  for (const [net, bits, type] of list) b.addSubnet(net, bits, type);
  return b;
}

const LOOPBACK = ranges([['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]);
const UNSPECIFIED = ranges([['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]);
const PRIVATE = ranges([
  ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'],
  ['fc00::', 7, 'ipv6'], ['fec0::', 10, 'ipv6'],
]);
const LINK_LOCAL = ranges([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]);
const SHARED = ranges([['100.64.0.0', 10, 'ipv4']]);
const MULTICAST = ranges([['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]);
const BROADCAST = ranges([['255.255.255.255', 32, 'ipv4']]);

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part counts as two). */
function groupsOf(address: string): number[] | null {
  let a = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number);
    a = `${a.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined ? (tail ? tail.split(':') : []) : [];
  const groups = tail !== undefined ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  if (groups.length !== 8) return null;
  return groups.map((g) => parseInt(g, 16));
}

/** An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`): the IPv4 address. */
function embeddedIPv4(address: string): string | null {
  const g = groupsOf(address);
  if (!g || g.slice(0, 5).some((x) => x !== 0)) return null;
  if (g[5] !== 0xffff && !(g[5] === 0 && (g[6] !== 0 || g[7] > 1))) return null;
  return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}`;
}

function ownAddresses(): Set<string> {
  // The loopback interface's own addresses count even where the interface list omits one (no IPv6 in a container).
  const out = new Set<string>(['127.0.0.1', '::1']);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase());
  return out;
}

/**
 * Why connecting to `address` is refused: null for a public address. Multicast and broadcast addresses are never
 * reachable by a connection; the others are local and refused unless `allowLocal`.
 */
export function addressProblem(address: string, allowLocal = false): string | null {
  const v4 = isIP(address) === 6 ? embeddedIPv4(address) : null;
  const addr = v4 ?? address;
  const type = isIP(addr) === 4 ? 'ipv4' : 'ipv6';
  if (!isIP(addr)) return 'Host cannot be resolved or invalid';
  if (MULTICAST.check(addr, type)) return 'Requests to multicast addresses are not allowed';
  if (BROADCAST.check(addr, type)) return 'Requests to the limited broadcast address are not allowed';
  if (allowLocal) return null;
  if (UNSPECIFIED.check(addr, type) || ownAddresses().has(addr.toLowerCase())) return 'Requests to localhost are not allowed';
  if (LOOPBACK.check(addr, type)) return 'Requests to loopback addresses are not allowed';
  if (LINK_LOCAL.check(addr, type)) return 'Requests to the link local network are not allowed';
  if (SHARED.check(addr, type)) return 'Requests to the shared address space are not allowed';
  if (PRIVATE.check(addr, type)) return 'Requests to the local network are not allowed';
  // A compatible address of a public IPv4 one, or anything else IPv6 that embeds IPv4 oddly, passes as what it is.
  return null;
}

/**
 * Checks a URL the server is asked to connect to: scheme, port, host resolved, every address allowed. Throws
 * BlockedUrlError with the reason; answers the target with the address to connect to.
 */
export async function checkOutboundUrl(deps: Pick<ServiceDeps, 'db' | 'config' | 'caches'>, raw: string, o: GuardOptions): Promise<OutboundTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedUrlError('URI is invalid');
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (!o.schemes.includes(scheme)) throw new BlockedUrlError(`Only allowed schemes are ${o.schemes.join(', ')}`);
  if (!url.hostname) throw new BlockedUrlError('URI is invalid');
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[scheme];
  if (url.port && port !== DEFAULT_PORTS[scheme] && port !== 80 && port !== 443 && port <= 1024) {
    throw new BlockedUrlError('Only allowed ports are 80, 443, and any over 1024');
  }
  // git reads a user name beginning with '-' as an option on some transports (the reference refuses it too).
  if (url.username && !/^[A-Za-z0-9]/.test(decodeURIComponent(url.username))) throw new BlockedUrlError('Username needs to start with an alphanumeric character');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (/^[^A-Za-z0-9[]/.test(url.hostname)) throw new BlockedUrlError('Hostname or IP address invalid');
  const allowLocal = !!(await applicationSettings(deps))[o.allowLocal];
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (o.resolver ?? resolver)(host);
    } catch {
      addresses = [];
    }
    if (!addresses.length) throw new BlockedUrlError('Host cannot be resolved or invalid');
  }
  for (const a of addresses) {
    const problem = addressProblem(a.address, allowLocal);
    if (problem) throw new BlockedUrlError(problem);
  }
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const clean = new URL(url.toString());
  clean.username = '';
  clean.password = '';
  return { url: clean, username, password, host, port, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}

/**
 * Why a link a user gives may not be kept, from the URL alone: for URLs Bellows stores and shows but never fetches
 * itself (a metric image's `url`). Same scheme and address rules and sentences as `checkOutboundUrl`, local
 * addresses always refused; a host name is not resolved (nothing connects to it), only `localhost` names refused.
 */
export function publicLinkProblem(raw: string, schemes: readonly string[] = ['http', 'https']): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'URI is invalid';
  }
  if (!schemes.includes(url.protocol.replace(/:$/, ''))) return `Only allowed schemes are ${schemes.join(', ')}`;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (!host) return 'URI is invalid';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'Requests to localhost are not allowed';
  return isIP(host) ? addressProblem(host, false) : null;
}

/** A URL as it may be shown or logged: without user name and password (unparseable: nothing of it). */
export function withoutCredentials(raw: string | null): string | null {
  if (raw === null) return null;
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return raw.includes('@') ? raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1') : raw;
  }
}

/**
 * How git connects to the checked address and nowhere else: for http(s) curl is told the host's address and no
 * redirect is followed (it would lead to an unchecked host); git:// connects to the address itself; the
 * credentials travel in a header, never in the command line. Git configuration as environment variables
 * (GIT_CONFIG_COUNT...), which neither the process list nor error messages show.
 */
export function gitPinning(t: OutboundTarget): { url: string; env: Record<string, string> } {
  const config: Array<[string, string]> = [
    ['protocol.allow', 'never'],
    [`protocol.${t.url.protocol.replace(/:$/, '')}.allow`, 'always'],
    ['http.followRedirects', 'false'],
    ['credential.helper', ''],
  ];
  let url = t.url.toString();
  if (t.url.protocol === 'git:') {
    const u = new URL(url);
    u.hostname = t.family === 6 ? `[${t.address}]` : t.address;
    url = u.toString();
  } else {
    config.push(['http.curloptResolve', `${t.host}:${t.port}:${t.family === 6 ? `[${t.address}]` : t.address}`]);
    if (t.username || t.password) {
      config.push(['http.extraHeader', `Authorization: Basic ${Buffer.from(`${t.username}:${t.password}`).toString('base64')}`]);
    }
  }
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return { url, env };
}

/** A `lookup` for node's http(s) agents that answers the checked address only (webhooks, image fetches). */
export function pinnedLookup(t: OutboundTarget) {
  return (_host: string, opts: { all?: boolean }, cb: (err: Error | null, address: any, family?: number) => void) => {
    if (opts?.all) cb(null, [{ address: t.address, family: t.family }]);
    else cb(null, t.address, t.family);
  };
}

/** Hides the credentials of a target in a text (git's messages) before it is stored or shown. */
export function redactCredentials(text: string, t: Pick<OutboundTarget, 'password'>): string {
  const out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@\s/'"]*@/gi, '$1');
  // The password anywhere else (the user name is no secret, and is often a word of the message too).
  return t.password ? out.split(t.password).join('[FILTERED]') : out;
}
