import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../../src/errors.js';
import { classifyAddress, createEgressGuard, embeddedIPv4, type AddressClass } from '../../../src/tools/egress.js';

/** The egress guard's address classifier and allowlist, by table and by property. */

const TABLE: [string, AddressClass][] = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.216.34', 'public'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'reserved'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['11.0.0.1', 'public'],
  ['100.63.255.255', 'public'],
  ['100.64.0.1', 'private'],
  ['100.127.255.255', 'private'],
  ['100.128.0.0', 'public'],
  ['100.100.100.200', 'metadata'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link_local'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['172.15.255.255', 'public'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.0', 'public'],
  ['192.168.1.1', 'private'],
  ['192.169.0.0', 'public'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::2', 'reserved'],
  ['fe80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['febf::1', 'link_local'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['fd00:ec2::253', 'private'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001::200e', 'public'],
  // IPv4-mapped, -compatible, NAT64 and 6to4 forms take the class of the IPv4 address they carry.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['[::ffff:7f00:1]', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:8.8.8.8', 'public'],
  ['::127.0.0.1', 'loopback'],
  ['::8.8.8.8', 'reserved'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['2002:7f00:1::', 'loopback'],
  ['2002:a9fe:a9fe::1', 'metadata'],
  ['2002:808:808::1', 'public'],
];

describe('classifyAddress', () => {
  it.each(TABLE)('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it('throws for text that is not an IP address', () => {
    for (const text of ['localhost', '127.1', '0x7f.0.0.1', '1.2.3', '', '[127.0.0.1]', ':::1']) expect(() => classifyAddress(text), text).toThrow(TypeError);
  });

  // The WHATWG URL parser (fetch, undici, Playwright's page.url) turns every IPv4 spelling into dotted
  // decimal, and every IPv6 spelling into its compressed form, before a host ever reaches the guard.
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://0xa.0.0.1/', '10.0.0.1'],
    ['http://2852039166/', '169.254.169.254'],
    ['http://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
    ['http://[0:0:0:0:0:ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
    ['http://[::FFFF:7F00:0001]/', '[::ffff:7f00:1]'],
    ['http://[0::1]/', '[::1]'],
  ])('%s parses to %s, which is refused', (url, host) => {
    const hostname = new URL(url).hostname;
    expect(hostname).toBe(host);
    expect(classifyAddress(hostname)).not.toBe('public');
  });

  it('agrees with the IPv4 address for every IPv4-mapped IPv6 form (property)', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
        expect(classifyAddress(`::ffff:${v4}`)).toBe(classifyAddress(v4));
        expect(classifyAddress(hex)).toBe(classifyAddress(v4));
        expect(classifyAddress(new URL(`http://[::ffff:${v4}]/`).hostname)).toBe(classifyAddress(v4));
        expect(embeddedIPv4(hex)).toBe(v4);
      }),
    );
  });

  it('classifies every IPv4 spelling a URL accepts like its dotted form (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom('dec', 'hex', 'oct'), (n, base) => {
        const spelled = base === 'dec' ? String(n) : base === 'hex' ? `0x${n.toString(16)}` : `0${n.toString(8)}`;
        const dotted = [24, 16, 8, 0].map((s) => (n >>> s) & 0xff).join('.');
        expect(new URL(`http://${spelled}/`).hostname).toBe(dotted);
        expect(classifyAddress(new URL(`http://${spelled}/`).hostname)).toBe(classifyAddress(dotted));
      }),
    );
  });

  it('never calls an address in a refused IPv4 range public (property)', () => {
    const refused: [number, number][] = [
      [0x0a000000, 8],
      [0x7f000000, 8],
      [0xa9fe0000, 16],
      [0xac100000, 12],
      [0xc0a80000, 16],
      [0x64400000, 10],
      [0xe0000000, 4],
      [0x00000000, 8],
    ];
    fc.assert(
      fc.property(fc.constantFrom(...refused), fc.integer({ min: 0, max: 0xffffffff }), ([base, bits], noise) => {
        const host = (base | (noise & (2 ** (32 - bits) - 1))) >>> 0;
        const dotted = [24, 16, 8, 0].map((s) => (host >>> s) & 0xff).join('.');
        expect(classifyAddress(dotted)).not.toBe('public');
      }),
    );
  });
});

describe('egress guard', () => {
  const denied = async (p: Promise<unknown> | (() => unknown)) => {
    try {
      await (typeof p === 'function' ? p() : p);
    } catch (err) {
      expect(isFlowError(err, 'egress_denied'), String(err)).toBe(true);
      return (err as { data: Record<string, unknown> }).data;
    }
    throw new Error('not refused');
  };

  it('refuses literals without a lookup, and metadata names by name', async () => {
    let lookups = 0;
    const guard = createEgressGuard({
      lookup: async () => {
        lookups++;
        return [{ address: '8.8.8.8', family: 4 }];
      },
    });
    expect(await denied(() => guard.precheck('10.0.0.1', 80))).toMatchObject({ reason: 'private', address: '10.0.0.1', retryable: false });
    expect(await denied(guard.resolve('169.254.169.254', 80))).toMatchObject({ reason: 'metadata' });
    expect(await denied(guard.resolve('[::1]', 80))).toMatchObject({ reason: 'loopback', address: '::1' });
    expect(await denied(guard.resolve('metadata.google.internal', 80))).toMatchObject({ reason: 'metadata_name' });
    expect(await denied(guard.resolve('METADATA.GOOGLE.INTERNAL.', 80))).toMatchObject({ reason: 'metadata_name' });
    expect(lookups).toBe(0);
    expect(await guard.resolve('example.test', 443)).toEqual({ address: '8.8.8.8', family: 4 });
    expect(lookups).toBe(1);
    expect(guard.precheck('8.8.8.8', 80)).toBe('8.8.8.8');
    expect(guard.precheck('example.test', 80)).toBeUndefined();
  });

  it('refuses a name when any address it resolves to is refused', async () => {
    const guard = createEgressGuard({
      lookup: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '::ffff:127.0.0.1', family: 6 },
      ],
    });
    expect(await denied(guard.resolve('mixed.test', 80))).toMatchObject({ host: 'mixed.test', address: '::ffff:127.0.0.1', reason: 'loopback' });
    const empty = createEgressGuard({ lookup: async () => [] });
    expect(await denied(empty.resolve('nothing.test', 80))).toMatchObject({ reason: 'unresolved' });
  });

  it('resolves localhost with the system resolver and refuses it', async () => {
    expect(await denied(createEgressGuard().resolve('localhost', 80))).toMatchObject({ host: 'localhost', reason: 'loopback' });
  });

  it('allows what the allowlist names: IP, IP:port, [IPv6]:port, CIDR, names and wildcards', async () => {
    const lookup = async (name: string) => [{ address: name.startsWith('v6') ? 'fd00::5' : '10.1.2.3', family: 4 }];
    const guard = createEgressGuard({
      allow: ['127.0.0.1:8080', '[::1]:9090', '192.168.0.0/16', 'fd00::/8', 'intranet.test', '*.corp.test:443', '127.0.0.2'],
      lookup,
    });
    expect(guard.precheck('127.0.0.1', 8080)).toBe('127.0.0.1');
    expect(await denied(() => guard.precheck('127.0.0.1', 8081))).toMatchObject({ reason: 'loopback' });
    expect(guard.precheck('[::1]', 9090)).toBe('::1');
    expect(await denied(() => guard.precheck('::1', 9091))).toMatchObject({ reason: 'loopback' });
    expect(guard.precheck('::ffff:127.0.0.1', 8080)).toBe('::ffff:127.0.0.1');
    expect(guard.precheck('192.168.44.5', 1)).toBe('192.168.44.5');
    expect(guard.precheck('127.0.0.2', 5)).toBe('127.0.0.2');
    expect(await guard.resolve('intranet.test', 80)).toEqual({ address: '10.1.2.3', family: 4 });
    expect(await guard.resolve('a.b.corp.test', 443)).toEqual({ address: '10.1.2.3', family: 4 });
    expect(await denied(guard.resolve('a.corp.test', 80))).toMatchObject({ reason: 'private' });
    expect(await denied(guard.resolve('corp.test', 443))).toMatchObject({ reason: 'private' });
    expect(await guard.resolve('v6.other.test', 1)).toEqual({ address: 'fd00::5', family: 6 });
    expect(await denied(guard.resolve('other.test', 1))).toMatchObject({ reason: 'private' });
  });

  it('the denylist wins over the allowlist and over public: literals, names and what names resolve to', async () => {
    const guard = createEgressGuard({
      allow: ['127.0.0.1', 'self.test'],
      deny: ['127.0.0.1:8080', 'localhost:8080', '93.184.216.34:443'],
      lookup: async (host) => (host === 'self.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]),
    });
    expect(await denied(guard.resolve('127.0.0.1', 8080))).toMatchObject({ reason: 'denylisted', address: '127.0.0.1', port: 8080 });
    expect(await denied(guard.resolve('localhost', 8080))).toMatchObject({ reason: 'denylisted' });
    // An allowlisted name that resolves to a denied address and port is refused too.
    expect(await denied(guard.resolve('self.test', 8080))).toMatchObject({ reason: 'denylisted' });
    expect(await denied(guard.resolve('93.184.216.34', 443))).toMatchObject({ reason: 'denylisted' });
    // Other ports of the same host stay allowed.
    expect(await guard.resolve('127.0.0.1', 8081)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await guard.resolve('self.test', 8081)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(() => createEgressGuard({ deny: ['a b'] })).toThrow(expect.objectContaining({ code: 'invalid_tool_policy' }));
  });

  it('refuses a malformed allowlist with invalid_tool_policy', () => {
    for (const entry of ['', 'http://x', '10.0.0.0/33', '127.0.0.1:0', '127.0.0.1:70000', '[127.0.0.1]:80', 'a b', 'fe80::/200', 42]) {
      expect(() => createEgressGuard({ allow: [entry as string] }), String(entry)).toThrow(expect.objectContaining({ code: 'invalid_tool_policy' }));
    }
  });
});
