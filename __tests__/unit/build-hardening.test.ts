// The build's safety rails, without the real kustomize: the walk over the kustomization tree runs
// before kustomize does, so a refusal shows as that error, and a tree that passes reaches the
// (missing or fake) binary. See SECURITY.md.
import { chmod, mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, kustomizeEnv } from '../../src/kustomize/build.js';
import { decryptSources } from '../../src/sops/sources.js';
import { KUSTOMIZE } from '../helpers/paths.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const NO_KUSTOMIZE = '/nonexistent/kustomize';
const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n';

/** A source root with `files` (path → text) and an `outside` directory next to it. */
async function tree(files: Record<string, string>): Promise<{ root: string; outside: string }> {
  const top = await mkdtemp(join(tmpdir(), 'kr-hardening-'));
  const root = join(top, 'root');
  const outside = join(top, 'outside');
  await mkdir(outside, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return { root, outside };
}

describe('kustomizeEnv', () => {
  const env = {
    PATH: '/usr/bin',
    HOME: '/home/runner',
    HTTPS_PROXY: 'http://proxy:3128',
    no_proxy: 'localhost',
    INPUT_KUBECONFIG: 'apiVersion: v1',
    'INPUT_SOPS-AGE-KEY': 'AGE-SECRET-KEY-1',
    'INPUT_GITHUB-TOKEN': 'ghs_x',
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: 't',
    AWS_SECRET_ACCESS_KEY: 's',
    GIT_SSH_COMMAND: 'ssh -i key',
    SSH_AUTH_SOCK: '/tmp/agent',
  };

  it('keeps what kustomize needs and drops inputs, runner tokens and credentials', () => {
    expect(kustomizeEnv(env, false)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/runner',
      HTTPS_PROXY: 'http://proxy:3128',
      no_proxy: 'localhost',
    });
  });

  it("adds git's settings only when remote bases are allowed", () => {
    expect(kustomizeEnv(env, true)).toMatchObject({ GIT_SSH_COMMAND: 'ssh -i key', SSH_AUTH_SOCK: '/tmp/agent' });
    expect(Object.keys(kustomizeEnv(env, true)).filter((k) => /^(INPUT_|ACTIONS_|AWS_)/.test(k))).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')('is what the kustomize process gets', async () => {
    // plain: false, or the build would be computed without running kustomize (plain.ts, overlay.ts).
    const { root, outside } = await tree({ 'app/cm.yaml': CM, 'app/kustomization.yaml': 'resources: [cm.yaml]\n' });
    const fake = join(outside, 'kustomize');
    await writeFile(
      fake,
      '#!/bin/sh\nprintf \'apiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: env\\ndata:\\n  kubeconfig: "%s"\\n  path: "%s"\\n\' "$INPUT_KUBECONFIG" "${PATH:+set}"\n',
    );
    await chmod(fake, 0o755);
    process.env['INPUT_KUBECONFIG'] = 'secret-kubeconfig';
    try {
      const { objects } = await build({ root, path: 'app', kustomizeBin: fake, plain: false });
      expect(objects[0]?.['data']).toEqual({ kubeconfig: '', path: 'set' });
    } finally {
      delete process.env['INPUT_KUBECONFIG'];
    }
  });
});

describe('the kustomization file kustomize reads', () => {
  // Flux's fields are merged into the file, which is written again: as YAML 1.2, a quoted `yes`
  // reached kustomize unquoted and its YAML 1.1 reader failed ("cannot unmarshal bool").
  it('keeps quoted strings that YAML 1.1 reads otherwise strings', async () => {
    const { root } = await tree({
      'app/kustomization.yaml':
        'namespace: "0755"\nlabels:\n- pairs: {a: "yes", b: "on", c: "0x1F", d: "1e3"}\nresources: [cm.yaml]\n',
      'app/cm.yaml': CM,
    });
    const { objects } = await build({ root, path: 'app', kustomizeBin: KUSTOMIZE, plain: false });
    expect(objects[0]?.metadata).toEqual({
      name: 'a',
      namespace: '0755',
      labels: { a: 'yes', b: 'on', c: '0x1F', d: '1e3' },
    });
  });
});

describe('build refuses what would leave the checked-out source', () => {
  it.each([
    ['patches[].path', 'patches:\n- path: https://example.com/p.yaml\n'],
    ['patchesStrategicMerge', 'patchesStrategicMerge:\n- https://example.com/p.yaml\n'],
    ['replacements[].path', 'replacements:\n- path: https://example.com/r.yaml\n'],
    ['configMapGenerator[].files', 'configMapGenerator:\n- name: x\n  files: [key=https://example.com/f]\n'],
    ['secretGenerator[].envs', 'secretGenerator:\n- name: x\n  envs: [https://example.com/f.env]\n'],
    ['openapi.path', 'openapi:\n  path: http://169.254.169.254/latest\n'],
    ['configurations', 'configurations: [https://example.com/c.yaml]\n'],
    ['crds', 'crds: [https://example.com/c.yaml]\n'],
    ['generators', 'generators: [https://github.com/org/repo//gen?ref=v1]\n'],
    ['transformers', 'transformers: [https://example.com/t.yaml]\n'],
    ['validators', 'validators: [github.com/org/repo]\n'],
  ])('a remote %s entry', async (field, text) => {
    const { root } = await tree({ 'app/kustomization.yaml': `resources: [cm.yaml]\n${text}`, 'app/cm.yaml': CM });
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE })).rejects.toThrow(
      new RegExp(`app/kustomization.yaml: ${field.replace(/[[\]]/g, '\\$&')} entry ".*" is a remote`),
    );
  });

  it('lets remote entries through when remote bases are allowed', async () => {
    const { root } = await tree({
      'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n- path: https://example.com/p.yaml\n',
      'app/cm.yaml': CM,
    });
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE, allowRemoteBases: true })).rejects.toThrow(
      'kustomize binary',
    );
  });

  it('a directory reached through a symlink or .. out of the root', async () => {
    const { root, outside } = await tree({ 'app/kustomization.yaml': 'resources: [linked]\n' });
    await writeFile(join(outside, 'kustomization.yaml'), 'resources: []\n');
    await symlink(outside, join(root, 'app', 'linked'));
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE })).rejects.toThrow(
      'app/kustomization.yaml: resources entry "linked" leaves the source root',
    );
    // The build runs on a copy in the temporary directory: enough ".." reach "/" from anywhere.
    const up = `${'../'.repeat(40)}${outside.slice(1)}`;
    await writeFile(join(root, 'app', 'kustomization.yaml'), `transformers: [${up}]\n`);
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE })).rejects.toThrow(
      `app/kustomization.yaml: transformers entry "${up}" leaves the source root`,
    );
  });

  it('a kustomization file that is a symlink out of the root, which is neither read nor written', async () => {
    const { root, outside } = await tree({ 'app/cm.yaml': CM });
    await writeFile(join(outside, 'k.yaml'), 'resources: [cm.yaml]\n');
    await symlink(join(outside, 'k.yaml'), join(root, 'app', 'kustomization.yaml'));
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE })).rejects.toThrow(
      'app/kustomization.yaml is a symlink that leaves the source root',
    );
    expect(await readFile(join(outside, 'k.yaml'), 'utf8')).toBe('resources: [cm.yaml]\n');
  });

  it('never writes the generated kustomization through a dangling symlink', async () => {
    const { root, outside } = await tree({ 'app/cm.yaml': CM });
    await symlink(join(outside, 'planted'), join(root, 'app', 'kustomization.yaml'));
    await expect(build({ root, path: 'app', kustomizeBin: NO_KUSTOMIZE })).rejects.toThrow('kustomize binary');
    await expect(readFile(join(outside, 'planted'), 'utf8')).rejects.toThrow('ENOENT');
  });
});

describe('decryptSources', () => {
  it('never decrypts in place through a symlink that leaves the root', async () => {
    const encrypted = 'PASSWORD=ENC[AES256_GCM,data:x,iv:x,tag:x,type:str]\nsops_mac=ENC[AES256_GCM,data:x]\n';
    const { root, outside } = await tree({
      'app/kustomization.yaml': 'secretGenerator:\n- name: s\n  envs: [s.env]\nresources: [linked]\n',
    });
    await writeFile(join(outside, 's.env'), encrypted);
    await writeFile(join(outside, 'kustomization.yaml'), 'secretGenerator:\n- name: t\n  envs: [s.env]\n');
    await symlink(join(outside, 's.env'), join(root, 'app', 's.env'));
    await symlink(outside, join(root, 'app', 'linked'));
    // With no key service a decryption would fail, so an empty result means nothing was attempted.
    expect(await decryptSources(root, join(root, 'app'), { keyServices: [], verifyMac: true })).toEqual([]);
    expect(await readFile(join(outside, 's.env'), 'utf8')).toBe(encrypted);
  });
});
