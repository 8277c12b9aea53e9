import { describe, expect, it } from 'vitest';
import { isFlowError } from '../../src/errors.js';
import { checkPeers, missingPackageOf, missingPeerError, peerErrorFrom } from '../../src/util/peer-check.js';

// The optional-peer check the wrapped entries of dist/ run (scripts/peer-entries.mjs); the packed
// package is exercised end to end by test/e2e/package-install.test.ts.
const notFound = (specifier: string, code = 'ERR_MODULE_NOT_FOUND') =>
  Object.assign(new Error(`Cannot find package '${specifier}' imported from /app/node_modules/flowctl/dist/x.js`), { code });

function resolverMissing(...missing: string[]) {
  return (specifier: string) => {
    if (missing.some((name) => specifier === name || specifier.startsWith(`${name}/`))) throw notFound(specifier);
    return `file:///app/node_modules/${specifier}`;
  };
}

describe('checkPeers', () => {
  const peers = { '@electric-sql/pglite': ['@electric-sql/pglite'], kysely: ['kysely', 'kysely/migration'], pg: ['pg'] };

  it('passes when every peer resolves', () => {
    expect(() => checkPeers('flowctl/adapters/storage-sql', peers, resolverMissing())).not.toThrow();
  });

  it('names every missing peer and the install command, in one FlowError missing_peer', () => {
    let caught: unknown;
    try {
      checkPeers('flowctl/adapters/storage-sql', peers, resolverMissing('pg', 'kysely'));
    } catch (err) {
      caught = err;
    }
    expect(isFlowError(caught, 'missing_peer')).toBe(true);
    const err = caught as { message: string; data: unknown };
    expect(err.message).toBe('flowctl/adapters/storage-sql needs the optional peers "kysely", "pg": npm install kysely pg');
    expect(err.data).toEqual({ entry: 'flowctl/adapters/storage-sql', missing: ['kysely', 'pg'], install: 'npm install kysely pg' });
  });

  it('says "peer" for one, and accepts CommonJS not-found errors', () => {
    const resolve = (s: string) => {
      if (s === 'hono') throw notFound(s, 'MODULE_NOT_FOUND');
    };
    expect(() => checkPeers('flowctl/adapters/hono', { hono: ['hono'] }, resolve)).toThrow(
      'flowctl/adapters/hono needs the optional peer "hono": npm install hono',
    );
  });

  it('counts a package found with an unexported subpath as present (the import will say what is wrong)', () => {
    const resolve = () => {
      throw Object.assign(new Error('Package subpath is not defined by "exports"'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
    };
    expect(() => checkPeers('flowctl/adapters/x', { x: ['x/y'] }, resolve)).not.toThrow();
  });
});

describe('peerErrorFrom and missingPackageOf', () => {
  it('maps a failed import of a listed peer, scoped or with a subpath, to missing_peer', () => {
    expect(missingPackageOf(notFound('@modelcontextprotocol/sdk/server/stdio.js'))).toBe('@modelcontextprotocol/sdk');
    expect(missingPackageOf(notFound('hono/route'))).toBe('hono');
    const mapped = peerErrorFrom(notFound('playwright-core'), 'flowctl record', ['pg', 'playwright-core']);
    expect(isFlowError(mapped, 'missing_peer')).toBe(true);
    expect((mapped as Error).message).toBe('flowctl record needs the optional peer "playwright-core": npm install playwright-core');
  });

  it('leaves every other error alone: a non-peer package, a relative file, another code', () => {
    for (const err of [
      notFound('left-pad'),
      notFound('./chunk-x.js'),
      new Error('boom'),
      Object.assign(new Error("Cannot find package 'pg'"), { code: 'EACCES' }),
    ]) {
      expect(peerErrorFrom(err, 'flowctl serve', ['pg'])).toBe(err);
    }
    expect(missingPackageOf(undefined)).toBeUndefined();
  });

  it('builds the same error directly', () => {
    expect(missingPeerError('flowctl/testing', ['vitest']).message).toBe('flowctl/testing needs the optional peer "vitest": npm install vitest');
  });
});
