import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestBytes } from '../../../src/canonical.js';
import { fsRead, fsWrite } from '../../../src/tools/builtins/index.js';
import { createTestToolContext } from '../../../src/tools/testing-context.js';

let base: string; // holds root/ and outside/
let root: string;
let outside: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'flowctl-fs-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'top secret');
});
afterEach(() => rm(base, { recursive: true, force: true }));

const ctx = () => createTestToolContext({ cwd: root });

describe('fs/write', () => {
  it('writes text atomically, creating parents, and reports the relative path as an fs effect', async () => {
    const c = ctx();
    const out = await fsWrite.run({ path: './out/../out/notes/a.txt', content: 'héllo' }, c);
    expect(out).toEqual({ path: 'out/notes/a.txt', bytes: 6, digest: digestBytes('héllo') });
    expect(await readFile(join(root, 'out/notes/a.txt'), 'utf8')).toBe('héllo');
    expect(c.effects).toEqual([{ kind: 'fs', target: 'out/notes/a.txt' }]);
    expect(await readdir(join(root, 'out/notes'))).toEqual(['a.txt']); // no temp file left behind
  });

  it('writes base64 and pretty sorted JSON', async () => {
    await fsWrite.run({ path: 'bin.dat', content: Buffer.from([0, 255, 7]).toString('base64'), encoding: 'base64' }, ctx());
    expect([...(await readFile(join(root, 'bin.dat')))]).toEqual([0, 255, 7]);
    await fsWrite.run({ path: 'data.json', json: { b: 1, a: [true] } }, ctx());
    expect(await readFile(join(root, 'data.json'), 'utf8')).toBe('{\n  "a": [\n    true\n  ],\n  "b": 1\n}\n');
  });

  it('replaces an existing file and fails without mkdirs when the parent is missing', async () => {
    await writeFile(join(root, 'f.txt'), 'old');
    await fsWrite.run({ path: 'f.txt', content: 'new' }, ctx());
    expect(await readFile(join(root, 'f.txt'), 'utf8')).toBe('new');
    await expect(fsWrite.run({ path: 'missing/f.txt', content: 'x', mkdirs: false }, ctx())).rejects.toMatchObject({ code: 'fs_not_found' });
  });

  it.each(['/etc/passwd', join('..', 'outside', 'x.txt'), 'a/../../outside/x.txt', 'C:\\windows\\x', '..'])(
    'refuses %s with fs_path_outside_root and writes nothing',
    async (path) => {
      const c = ctx();
      await expect(fsWrite.run({ path, content: 'x' }, c)).rejects.toMatchObject({ code: 'fs_path_outside_root', data: { retryable: false } });
      expect(c.effects).toEqual([]);
      expect(await readdir(outside)).toEqual(['secret.txt']);
    },
  );

  it('refuses to write through a symlinked directory that leads outside', async () => {
    await symlink(outside, join(root, 'link'));
    const c = ctx();
    await expect(fsWrite.run({ path: 'link/x.txt', content: 'x' }, c)).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    await expect(fsWrite.run({ path: 'link/new/deeper/x.txt', content: 'x' }, c)).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('refuses a symlinked file that points outside, and a dangling symlink', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'to-secret'));
    await symlink(join(outside, 'nowhere'), join(root, 'dangling'));
    await expect(fsWrite.run({ path: 'to-secret', content: 'pwned' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    await expect(fsWrite.run({ path: 'dangling', content: 'pwned' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('needs exactly one of content and json, and refuses the root itself', async () => {
    await expect(fsWrite.run({ path: 'x' }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
    await expect(fsWrite.run({ path: 'x', content: 'a', json: 1 }, ctx())).rejects.toMatchObject({ code: 'invalid_tool_input' });
    await expect(fsWrite.run({ path: '.', content: 'a' }, ctx())).rejects.toMatchObject({ code: 'fs_bad_path' });
  });
});

describe('fs/read', () => {
  it('reads text, base64 and JSON without recording an effect', async () => {
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'd/a.json'), '{"k":[1,2]}');
    const c = ctx();
    expect(await fsRead.run({ path: 'd/a.json' }, c)).toEqual({ path: 'd/a.json', content: '{"k":[1,2]}', bytes: 11, digest: digestBytes('{"k":[1,2]}') });
    expect(await fsRead.run({ path: 'd/a.json', as: 'json' }, c)).toMatchObject({ content: { k: [1, 2] } });
    expect(await fsRead.run({ path: 'd/a.json', as: 'base64' }, c)).toMatchObject({ content: Buffer.from('{"k":[1,2]}').toString('base64') });
    expect(c.effects).toEqual([]);
  });

  it('follows a symlink that stays inside the root', async () => {
    await writeFile(join(root, 'real.txt'), 'inside');
    await symlink(join(root, 'real.txt'), join(root, 'alias.txt'));
    expect(await fsRead.run({ path: 'alias.txt' }, ctx())).toMatchObject({ path: 'alias.txt', content: 'inside' });
  });

  it.each(['/etc/hostname', '../outside/secret.txt', 'x/../../outside/secret.txt'])('refuses %s', async (path) => {
    await expect(fsRead.run({ path }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
  });

  it('refuses symlink escapes, by file and by directory', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'to-secret'));
    await symlink(outside, join(root, 'out-dir'));
    await expect(fsRead.run({ path: 'to-secret' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
    await expect(fsRead.run({ path: 'out-dir/secret.txt' }, ctx())).rejects.toMatchObject({ code: 'fs_path_outside_root' });
  });

  it('names missing files, directories, oversize files and bad JSON', async () => {
    await mkdir(join(root, 'dir'));
    await writeFile(join(root, 'big.txt'), 'x'.repeat(100));
    await writeFile(join(root, 'bad.json'), '{');
    await expect(fsRead.run({ path: 'nope.txt' }, ctx())).rejects.toMatchObject({ code: 'fs_not_found', data: { path: 'nope.txt' } });
    await expect(fsRead.run({ path: 'dir' }, ctx())).rejects.toMatchObject({ code: 'fs_not_a_file' });
    await expect(fsRead.run({ path: 'big.txt', max_bytes: 10 }, ctx())).rejects.toMatchObject({ code: 'fs_too_large' });
    await expect(fsRead.run({ path: 'bad.json', as: 'json' }, ctx())).rejects.toMatchObject({ code: 'fs_bad_json' });
    await expect(fsRead.run({ path: 'a\u0000b' }, ctx())).rejects.toMatchObject({ code: 'fs_bad_path' });
  });
});
