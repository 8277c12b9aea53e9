import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { FlowError } from '../errors.js';

/**
 * The egress guard (docs/tools.md, "Policy"): which addresses `net` and `browser` tools may connect
 * to. Private, loopback, link-local, multicast, unspecified, reserved and cloud-metadata addresses are
 * refused unless an allowlist entry matches. Callers check the address a connection is actually made
 * to (after DNS, at connect time), so neither DNS rebinding nor a redirect gets around it.
 */

/** What kind of address an IP is. Everything but `public` is refused unless allowlisted. */
export type AddressClass = 'public' | 'private' | 'loopback' | 'link_local' | 'multicast' | 'unspecified' | 'metadata' | 'reserved';

/** An injectable DNS lookup: every address `hostname` resolves to. Default `dns.lookup(host, {all: true})`. */
export type EgressLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface EgressPolicy {
  /**
   * Destinations allowed although their address class is refused. Entries: an IP (`127.0.0.1`,
   * `::1` or `[::1]`), an IP with a port (`127.0.0.1:8080`, `[::1]:8080`), a CIDR (`10.0.0.0/8`,
   * `fd00::/8`), a host name (`intranet.example`), a name with a port (`intranet.example:8443`), or a
   * wildcard name (`*.corp.example`, any depth below it). IP and CIDR entries match the resolved
   * address; name entries match the requested name, and then every address it resolves to is allowed.
   * Default none.
   */
  allow?: readonly string[];
  /**
   * Destinations refused whatever their address class and the allowlist say (same entry forms as
   * `allow`): the hosted service puts its own listeners here, so no run reaches the service's API
   * even where the allowlist covers loopback. A name entry refuses the name and every address it
   * resolves to. Default none.
   */
  deny?: readonly string[];
  /** DNS lookup used for names (tests inject one). Default `dns.promises.lookup(host, {all: true, verbatim: true})`. */
  lookup?: EgressLookup;
}

/** Names of cloud metadata services, refused by name (before any lookup) unless allowlisted. */
export const METADATA_HOSTNAMES: readonly string[] = ['metadata.google.internal', 'metadata.goog'];

interface Range {
  base: bigint;
  bits: number;
  cls: AddressClass;
}

const V4_BITS = 32;
const V6_BITS = 128;

function v4ToBig(address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function v6ToBig(address: string): bigint {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // An embedded dotted IPv4 tail (`::ffff:127.0.0.1`) is two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = Number(v4ToBig(tail));
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const double = text.indexOf('::');
  const all =
    double < 0
      ? groups(text)
      : (() => {
          const left = groups(text.slice(0, double));
          const right = groups(text.slice(double + 2));
          return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
        })();
  return all.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

function bigToV4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 0xffn)).join('.');
}

function range(cidr: string, cls: AddressClass): Range {
  const [ip, bits] = cidr.split('/');
  return isIP(ip!) === 4 ? { base: v4ToBig(ip!), bits: Number(bits), cls } : { base: v6ToBig(ip!), bits: Number(bits), cls };
}

function inRange(n: bigint, total: number, r: Range): boolean {
  const shift = BigInt(total - r.bits);
  return n >> shift === r.base >> shift;
}

// First match wins: the specific ranges (metadata) come before the ranges that contain them.
const V4_RANGES: Range[] = [
  range('169.254.169.254/32', 'metadata'), // AWS, GCP, Azure, OCI, DigitalOcean, ...
  range('169.254.170.2/32', 'metadata'), // AWS ECS task metadata
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud
  range('0.0.0.0/32', 'unspecified'),
  range('0.0.0.0/8', 'reserved'), // "this network": Linux connects 0.x to the local host
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'private'), // carrier-grade NAT
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link_local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  range('192.0.2.0/24', 'reserved'), // documentation
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'reserved'), // benchmarking
  range('198.51.100.0/24', 'reserved'),
  range('203.0.113.0/24', 'reserved'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'), // including 255.255.255.255
];

const V6_RANGES: Range[] = [
  range('fd00:ec2::254/128', 'metadata'), // AWS IMDS over IPv6
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('64:ff9b:1::/48', 'private'), // local-use NAT64
  range('100::/64', 'reserved'), // discard-only
  range('2001:db8::/32', 'reserved'), // documentation
  range('fc00::/7', 'private'), // unique local
  range('fe80::/10', 'link_local'),
  range('fec0::/10', 'private'), // site-local (deprecated)
  range('ff00::/8', 'multicast'),
];

// IPv6 forms that carry an IPv4 address: classified by the IPv4 address inside.
const MAPPED = range('::ffff:0:0/96', 'reserved');
const COMPAT = range('::/96', 'reserved'); // deprecated IPv4-compatible (`::127.0.0.1`)
const NAT64 = range('64:ff9b::/96', 'reserved');
const SIX_TO_FOUR = range('2002::/16', 'reserved');

function classifyV4(n: bigint): AddressClass {
  return V4_RANGES.find((r) => inRange(n, V4_BITS, r))?.cls ?? 'public';
}

/**
 * The IPv4 address an IPv6 address carries (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64
 * `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`), as dotted text, or undefined.
 */
export function embeddedIPv4(address: string): string | undefined {
  if (isIP(address) !== 6) return undefined;
  const n = v6ToBig(address);
  if (inRange(n, V6_BITS, MAPPED) || inRange(n, V6_BITS, NAT64)) return bigToV4(n & 0xffffffffn);
  if (inRange(n, V6_BITS, COMPAT) && n > 1n) return bigToV4(n & 0xffffffffn);
  if (inRange(n, V6_BITS, SIX_TO_FOUR)) return bigToV4((n >> 80n) & 0xffffffffn);
  return undefined;
}

/**
 * The class of an IP address (IPv4 dotted, IPv6 with or without brackets or zone). IPv6 forms that
 * carry an IPv4 address take its class (a deprecated IPv4-compatible form of a public address is
 * `reserved`). Throws TypeError for text that is not an IP address.
 */
export function classifyAddress(address: string): AddressClass {
  const bracketed = address.startsWith('[') && address.endsWith(']');
  const ip = bracketed ? address.slice(1, -1) : address;
  const family = isIP(ip);
  if (bracketed && family !== 6) throw new TypeError(`[flowctl] [egress] "${address}" is not an IP address`);
  if (family === 4) return classifyV4(v4ToBig(ip));
  if (family !== 6) throw new TypeError(`[flowctl] [egress] "${address}" is not an IP address`);
  const n = v6ToBig(ip);
  const direct = V6_RANGES.find((r) => inRange(n, V6_BITS, r));
  if (direct) return direct.cls;
  const inner = embeddedIPv4(ip);
  if (inner !== undefined) {
    const cls = classifyV4(v4ToBig(inner));
    // Only a public address may pass through NAT64 or 6to4; the compatible form is never legitimate.
    return cls === 'public' && inRange(n, V6_BITS, COMPAT) ? 'reserved' : cls;
  }
  return 'public';
}

/** A checked allowlist entry. */
type AllowEntry =
  | { kind: 'ip'; family: 4 | 6; value: bigint; port?: number }
  | { kind: 'cidr'; family: 4 | 6; range: Range }
  | { kind: 'name'; name: string; wildcard: boolean; port?: number };

const NAME = /^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function badEntry(entry: unknown, why: string): FlowError {
  return new FlowError(
    'invalid_tool_policy',
    `[flowctl] [egress] allowlist entry ${JSON.stringify(entry)} ${why}; use an IP, IP:port, [IPv6]:port, a CIDR, a host name, host:port or *.domain`,
    {
      data: { entry },
    },
  );
}

function parsePort(text: string, entry: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) throw badEntry(entry, 'has an invalid port');
  return Number(text);
}

/** Normalise an IP for matching: an IPv4-mapped IPv6 address becomes its IPv4 address. */
function ipValue(ip: string): { family: 4 | 6; value: bigint } {
  if (isIP(ip) === 4) return { family: 4, value: v4ToBig(ip) };
  const n = v6ToBig(ip);
  if (inRange(n, V6_BITS, MAPPED)) return { family: 4, value: n & 0xffffffffn };
  return { family: 6, value: n };
}

function parseEntry(entry: unknown): AllowEntry {
  if (typeof entry !== 'string' || entry.trim() === '') throw badEntry(entry, 'is not a non-empty string');
  const text = entry.trim().toLowerCase();
  if (text.includes('/')) {
    const [ip, bits, extra] = text.split('/');
    const family = isIP(ip!);
    const max = family === 4 ? V4_BITS : V6_BITS;
    if (extra !== undefined || family === 0 || !/^\d{1,3}$/.test(bits!) || Number(bits) > max) throw badEntry(entry, 'is not a valid CIDR');
    return { kind: 'cidr', family: family as 4 | 6, range: range(`${ip}/${bits}`, 'public') };
  }
  if (isIP(text)) return { kind: 'ip', ...ipValue(text) };
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(text);
  if (bracket) {
    if (isIP(bracket[1]!) !== 6) throw badEntry(entry, 'has brackets around something that is not an IPv6 address');
    return { kind: 'ip', ...ipValue(bracket[1]!), ...(bracket[2] !== undefined ? { port: parsePort(bracket[2], entry) } : {}) };
  }
  const colon = text.lastIndexOf(':');
  const host = colon >= 0 ? text.slice(0, colon) : text;
  const port = colon >= 0 ? parsePort(text.slice(colon + 1), entry) : undefined;
  if (isIP(host) === 4) return { kind: 'ip', ...ipValue(host), ...(port !== undefined ? { port } : {}) };
  const name = host.replace(/\.$/, '');
  if (!NAME.test(name)) throw badEntry(entry, 'is not an IP, CIDR or host name');
  const wildcard = name.startsWith('*.');
  return { kind: 'name', name: wildcard ? name.slice(2) : name, wildcard, ...(port !== undefined ? { port } : {}) };
}

/** A URL hostname as compared: lowercase, no brackets, no trailing dot. */
function normalHost(host: string): string {
  const h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) return h.slice(1, -1);
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/** Why a destination was refused, as carried in the `egress_denied` error's data. */
export interface EgressDenial {
  host: string;
  port: number;
  /** The refused address (absent when a name was refused before any lookup). */
  address?: string;
  reason: AddressClass | 'metadata_name' | 'unresolved' | 'denylisted';
}

export interface EgressGuard {
  /**
   * Check a destination without DNS: an IP literal is classified, a metadata name refused. Returns
   * the address when `host` is an allowed IP literal, `undefined` when it is a name (resolve it with
   * `resolve`). Throws FlowError `egress_denied` (not retryable).
   */
  precheck(host: string, port: number): string | undefined;
  /**
   * Resolve `host` (a URL hostname; brackets allowed) and check every address it resolves to; any
   * refused address refuses the destination. Returns the address to connect to (the first one), so
   * the connection goes to exactly the address that was checked.
   */
  resolve(host: string, port: number): Promise<{ address: string; family: 4 | 6 }>;
}

export function egressDenied(denial: EgressDenial, what = 'connection'): FlowError {
  const where = `${denial.host.includes(':') ? `[${denial.host}]` : denial.host}:${denial.port}`;
  if (denial.reason === 'denylisted') {
    // The denylist wins over the allowlist: no hint to allowlist it.
    return new FlowError(
      'egress_denied',
      `[flowctl] [egress] ${what} to ${where} refused: ${where} is on the egress denylist (a hosted service denies runs its own API)`,
      {
        data: { retryable: false, ...denial },
      },
    );
  }
  const why =
    denial.reason === 'metadata_name'
      ? 'is a cloud metadata service name'
      : denial.reason === 'unresolved'
        ? 'did not resolve to any address'
        : denial.address !== undefined && denial.address !== denial.host
          ? `resolves to ${denial.address}, a ${denial.reason.replace('_', '-')} address`
          : `is a ${denial.reason.replace('_', '-')} address`;
  return new FlowError(
    'egress_denied',
    `[flowctl] [egress] ${what} to ${where} refused: ${where} ${why}, which the tool policy does not allow (add it to the egress allowlist to permit it)`,
    {
      data: { retryable: false, ...denial },
    },
  );
}

/** Check a policy's allowlist; throws FlowError `invalid_tool_policy` naming the first bad entry. */
export function checkEgressPolicy(policy: EgressPolicy): void {
  if (policy.allow !== undefined && !Array.isArray(policy.allow)) throw badEntry(policy.allow, 'list is not an array');
  for (const entry of policy.allow ?? []) parseEntry(entry);
  if (policy.deny !== undefined && !Array.isArray(policy.deny)) throw badEntry(policy.deny, 'list is not an array');
  for (const entry of policy.deny ?? []) parseEntry(entry);
  if (policy.lookup !== undefined && typeof policy.lookup !== 'function') {
    throw new FlowError('invalid_tool_policy', '[flowctl] [egress] lookup must be a function');
  }
}

const defaultLookup: EgressLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export function createEgressGuard(policy: EgressPolicy = {}): EgressGuard {
  checkEgressPolicy(policy);
  const entries = (policy.allow ?? []).map(parseEntry);
  const denied = (policy.deny ?? []).map(parseEntry);
  const lookup = policy.lookup ?? defaultLookup;

  const nameIn = (list: AllowEntry[], name: string, port: number) =>
    list.some((e) => e.kind === 'name' && (e.port === undefined || e.port === port) && (e.wildcard ? name.endsWith(`.${e.name}`) : name === e.name));
  const addressIn = (list: AllowEntry[], address: string, port: number) => {
    const { family, value } = ipValue(address);
    return list.some((e) => {
      if (e.kind === 'ip') return e.family === family && e.value === value && (e.port === undefined || e.port === port);
      if (e.kind === 'cidr') return e.family === family && inRange(value, family === 4 ? V4_BITS : V6_BITS, e.range);
      return false;
    });
  };
  const nameAllowed = (name: string, port: number) => nameIn(entries, name, port);
  const checkAddress = (host: string, address: string, port: number, trusted = false) => {
    const ip = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
    if (addressIn(denied, ip, port)) throw egressDenied({ host, port, address: ip, reason: 'denylisted' });
    if (trusted) return;
    const cls = classifyAddress(ip);
    if (cls !== 'public' && !addressIn(entries, ip, port)) throw egressDenied({ host, port, address: ip, reason: cls });
  };

  const precheck = (rawHost: string, port: number): string | undefined => {
    const host = normalHost(rawHost);
    if (isIP(host)) {
      checkAddress(host, host, port);
      return host;
    }
    if (nameIn(denied, host, port)) throw egressDenied({ host, port, reason: 'denylisted' });
    if (METADATA_HOSTNAMES.includes(host) && !nameAllowed(host, port)) throw egressDenied({ host, port, reason: 'metadata_name' });
    return undefined;
  };

  return {
    precheck,
    async resolve(rawHost, port) {
      const literal = precheck(rawHost, port);
      if (literal !== undefined) return { address: literal, family: isIP(literal) as 4 | 6 };
      const host = normalHost(rawHost);
      const trusted = nameAllowed(host, port);
      const found = await lookup(host);
      if (found.length === 0) throw egressDenied({ host, port, reason: 'unresolved' });
      for (const { address } of found) {
        if (isIP(address) === 0) throw egressDenied({ host, port, address, reason: 'unresolved' });
        checkAddress(host, address, port, trusted);
      }
      const first = found[0]!;
      return { address: first.address, family: isIP(first.address) as 4 | 6 };
    },
  };
}
