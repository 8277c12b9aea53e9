import { describe, expect, it } from 'vitest';
import { privateAddress, publicFetchHost } from '../../../src/service/oauth/provider.js';

/** Client ID Metadata Documents are never fetched from this machine or a private network (SSRF). */
describe('the CIMD fetch rule', () => {
  it('refuses IP literals and local names before any DNS query', async () => {
    for (const id of [
      'https://127.0.0.1/client.json',
      'https://10.0.0.8/c',
      'https://[::1]/c',
      'https://[::ffff:127.0.0.1]/c',
      'https://localhost/c',
      'https://printer.local/c',
      'https://intranet/c',
      'https://svc.internal/c',
      'not a url',
    ]) {
      expect([id, await publicFetchHost(id)]).toEqual([id, false]);
    }
  });

  it('knows private, loopback, link-local and mapped addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
    ]) {
      expect([ip, privateAddress(ip)]).toEqual([ip, true]);
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '172.32.0.1']) expect([ip, privateAddress(ip)]).toEqual([ip, false]);
  });
});
