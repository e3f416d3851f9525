// The build stage against the real kustomize binary (no cluster needed), over the fixture trees
// in __fixtures__/trees.
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../../src/kustomize/build.js';
import { parseManifests, subjectOf, type KubeObject } from '../../src/objects/kube.js';
import { KUSTOMIZE, REPO } from '../helpers/paths.js';

const ROOT = join(REPO, '__fixtures__', 'trees');

function run(path: string, fields: Partial<BuildOptions> = {}) {
  return build({ root: ROOT, path, kustomizeBin: KUSTOMIZE, ...fields });
}

function find(objects: KubeObject[], subject: string): KubeObject {
  const obj = objects.find((o) => subjectOf(o) === subject);
  if (!obj) throw new Error(`${subject} not in ${objects.map(subjectOf).join(', ')}`);
  return obj;
}

function image(obj: KubeObject): string {
  return (obj as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } }).spec.template.spec
    .containers[0]!.image;
}

describe('build over fixture trees', () => {
  it.each([
    {
      why: 'plain YAML dir: a kustomization is generated over the manifests (a values file is .sourceignored)',
      path: 'plain',
      fields: {},
      subjects: ['Namespace/plain', 'Deployment/plain/web'],
      check: (objs: KubeObject[]) => {
        expect(image(find(objs, 'Deployment/plain/web'))).toBe('nginx:1.25');
      },
    },
    {
      why: 'overlay with its base outside path',
      path: 'overlays/prod',
      fields: {},
      subjects: ['Namespace/prod', 'ConfigMap/prod/web-settings-hf678c7m2b', 'Service/prod/web', 'Deployment/prod/web'],
      check: (objs: KubeObject[]) => {
        expect(image(find(objs, 'Deployment/prod/web'))).toBe('registry.example.com/mirror/nginx:1.25');
      },
    },
    {
      why: 'components are appended (the component patches and adds objects)',
      path: 'overlays/prod',
      fields: { components: ['../../components/monitoring'] },
      subjects: [
        'Namespace/prod',
        'ConfigMap/prod/monitoring-config',
        'ConfigMap/prod/web-settings-hf678c7m2b',
        'Service/prod/web',
        'Deployment/prod/web',
      ],
      check: (objs: KubeObject[]) => {
        expect(find(objs, 'Deployment/prod/web').metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true' });
      },
    },
    {
      why: 'strategic-merge patch with a target',
      path: 'overlays/prod',
      fields: {
        patches: [
          {
            patch: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: any\nspec:\n  replicas: 5\n',
            target: { kind: 'Deployment' },
          },
        ],
      },
      subjects: undefined,
      check: (objs: KubeObject[]) => {
        expect((find(objs, 'Deployment/prod/web') as unknown as { spec: { replicas: number } }).spec.replicas).toBe(5);
      },
    },
    {
      why: 'JSON6902 patch targeting by name, matched before namePrefix renames (Flux order)',
      path: 'overlays/prod',
      fields: {
        namePrefix: 'p-',
        patches: [
          {
            patch: '- op: add\n  path: /metadata/labels\n  value: {patched: "yes"}\n',
            target: { kind: 'Service', name: 'web' },
          },
        ],
      },
      subjects: undefined,
      check: (objs: KubeObject[]) => {
        expect(find(objs, 'Service/prod/p-web').metadata.labels).toEqual({ patched: 'yes' });
      },
    },
    {
      why: 'images: newTag merges with the kustomization’s own newName for the same image',
      path: 'base',
      fields: { images: [{ name: 'nginx', newTag: '1.27' }] },
      subjects: undefined,
      check: (objs: KubeObject[]) => {
        expect(image(find(objs, 'Deployment/web'))).toBe('registry.example.com/mirror/nginx:1.27');
      },
    },
    {
      why: 'images: an overlay matches the name as the base left it (Flux merges into the overlay only)',
      path: 'overlays/prod',
      fields: { images: [{ name: 'nginx', newTag: '1.27' }] },
      subjects: undefined,
      check: (objs: KubeObject[]) => {
        expect(image(find(objs, 'Deployment/prod/web'))).toBe('registry.example.com/mirror/nginx:1.25');
      },
    },
    {
      why: 'images: digest replaces the tag',
      path: 'base',
      fields: {
        images: [{ name: 'nginx', digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' }],
      },
      subjects: undefined,
      check: (objs: KubeObject[]) => {
        expect(image(find(objs, 'Deployment/web'))).toBe(
          'registry.example.com/mirror/nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
        );
      },
    },
    {
      why: 'namePrefix and nameSuffix rename objects and references',
      path: 'base',
      fields: { namePrefix: 'team-', nameSuffix: '-v2' },
      subjects: ['Service/team-web-v2', 'Deployment/team-web-v2'],
      check: () => {},
    },
    {
      why: 'targetNamespace overrides the kustomization’s namespace, and renames the Namespace object too (kustomize)',
      path: 'overlays/prod',
      fields: { targetNamespace: 'staging' },
      subjects: [
        'Namespace/staging',
        'ConfigMap/staging/web-settings-hf678c7m2b',
        'Service/staging/web',
        'Deployment/staging/web',
      ],
      check: () => {},
    },
    {
      why: 'targetNamespace on plain YAML moves every namespaced object',
      path: 'plain',
      fields: { targetNamespace: 'moved' },
      subjects: ['Namespace/moved', 'Deployment/moved/web'],
      check: () => {},
    },
    {
      why: 'a missing component is dropped with ignoreMissingComponents',
      path: 'base',
      fields: { components: ['../components/nope'], ignoreMissingComponents: true },
      subjects: ['Service/web', 'Deployment/web'],
      check: () => {},
    },
  ])('$why', async ({ path, fields, subjects, check }) => {
    const result = await run(path, fields);
    if (subjects) expect(result.objects.map(subjectOf)).toEqual(subjects);
    check(result.objects);
    // No origin annotation reaches the output unless the user asked for it.
    for (const o of result.objects) expect(o.metadata.annotations?.['config.kubernetes.io/origin']).toBeUndefined();
  });

  it.each([
    {
      why: 'a missing component without ignoreMissingComponents',
      path: 'base',
      fields: { components: ['../components/nope'] },
      error:
        'spec.components[0] "../components/nope" not found relative to base; fix the path or set spec.ignoreMissingComponents: true',
    },
    { why: 'a path escaping the root', path: '../..', fields: {}, error: 'path "../.." leaves the source root' },
    {
      why: 'a path that does not exist',
      path: 'nowhere',
      fields: {},
      error: 'path "nowhere" does not exist under the source root',
    },
    {
      why: 'a remote base',
      path: 'remote',
      fields: {},
      error:
        'remote/kustomization.yaml: resources entry "https://github.com/stefanprodan/podinfo//kustomize?ref=6.9.2" is a remote base',
    },
    {
      why: 'an exec/KRM plugin',
      path: 'plugin',
      fields: {},
      error: "external plugins disabled; unable to load external plugin 'ShellOut'",
    },
    {
      why: 'a missing file, keeping kustomize’s message with root-relative paths',
      path: 'missing-file',
      fields: {},
      error:
        "kustomize build missing-file failed: Error: accumulating resources: accumulation err='accumulating resources from 'not-there.yaml': evalsymlink failure on 'missing-file/not-there.yaml'",
    },
    {
      why: 'invalid YAML names the file and line',
      path: 'broken',
      fields: {},
      error: 'broken/bad.yaml, document 1: invalid YAML: ',
    },
  ])('refuses $why', async ({ path, fields, error }) => {
    await expect(run(path, fields)).rejects.toThrow(error);
  });

  it('names the line of invalid YAML', async () => {
    await expect(run('broken')).rejects.toThrow(
      /broken\/bad.yaml, document 1: invalid YAML: Flow sequence .* at line 7, column 1$/,
    );
  });

  it('records each object’s source file relative to the root, generated objects included', async () => {
    // kustomize names the files only when asked (origin annotations cost it CPU): a build that did not
    // ask traces them on demand (traceOrigins), to the same files.
    const untraced = await run('overlays/prod', { components: ['../../components/monitoring'], plain: false });
    expect(untraced.origins.size).toBe(0);
    const traced = await untraced.traceOrigins!();
    const result = { ...untraced, origins: traced };
    const asked = await run('overlays/prod', {
      components: ['../../components/monitoring'],
      plain: false,
      traceOrigins: true,
    });
    expect(asked.origins).toEqual(traced);
    expect(asked.objects).toEqual(untraced.objects);
    expect(asked.traceOrigins).toBeUndefined();
    const origin = (subject: string) => {
      const o = find(result.objects, subject);
      const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
      return result.origins.get(`${group}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    };
    expect(origin('Deployment/prod/web')).toBe('base/deployment.yaml');
    expect(origin('Namespace/prod')).toBe('overlays/prod/namespace.yaml');
    expect(origin('ConfigMap/prod/monitoring-config')).toBe('components/monitoring/servicemonitor-config.yaml');
    expect(origin('ConfigMap/prod/web-settings-hf678c7m2b')).toBe('overlays/prod/kustomization.yaml');
    const plain = await run('plain');
    expect([...plain.origins.values()].sort()).toEqual(['plain/app/deployment.yaml', 'plain/namespace.yaml']);
  });

  it.each(['base', 'overlays/prod'])(
    'without Flux fields, %s builds exactly as `kustomize build` does',
    async (path) => {
      const { stdout } = await promisify(execFile)(KUSTOMIZE, ['build', join(ROOT, path)]);
      const ours = await run(path);
      expect(ours.objects).toEqual(parseManifests(stdout, 'kustomize'));
    },
  );

  it('keeps origin annotations the user asked for', async () => {
    const result = await run('base', { buildMetadata: ['originAnnotations'] });
    expect(find(result.objects, 'Service/web').metadata.annotations?.['config.kubernetes.io/origin']).toBe(
      'path: service.yaml\n',
    );
  });

  it('never writes into the source tree', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-untouched-'));
    await cp(ROOT, root, { recursive: true });
    const before = await readFile(join(root, 'overlays/prod/kustomization.yaml'), 'utf8');
    await build({
      root,
      path: 'overlays/prod',
      kustomizeBin: KUSTOMIZE,
      targetNamespace: 'x',
      images: [{ name: 'nginx', newTag: '2' }],
    });
    await build({ root, path: 'plain', kustomizeBin: KUSTOMIZE });
    expect(await readFile(join(root, 'overlays/prod/kustomization.yaml'), 'utf8')).toBe(before);
    await expect(readFile(join(root, 'plain/kustomization.yaml'), 'utf8')).rejects.toThrow('ENOENT');
  });

  it('refuses a path that leaves the root through a symlink', async () => {
    const root = await mkdtemp(join(tmpdir(), 'kr-symlink-'));
    await symlink(join(ROOT, 'base'), join(root, 'elsewhere'));
    await expect(build({ root, path: 'elsewhere', kustomizeBin: KUSTOMIZE })).rejects.toThrow('leaves the source root');
  });

  describe('the copy a build runs on holds what the build reads', () => {
    /** The files of a build's copy, relative to its root, as kustomize is about to read them. */
    const copied = async (root: string, path: string, fields: Partial<BuildOptions> = {}) => {
      const seen: string[][] = [];
      const result = await build({
        root,
        path,
        kustomizeBin: KUSTOMIZE,
        ...fields,
        beforeBuild: async (copyRoot) => {
          const files = await readdir(copyRoot, { recursive: true, withFileTypes: true });
          seen.push(
            files
              .filter((f) => !f.isDirectory())
              .map((f) => relative(copyRoot, join(f.parentPath, f.name)))
              .sort(),
          );
          return 0;
        },
      });
      return { result, seen };
    };

    it('copies an overlay, its base and its patch, not the rest of the repository, and builds the same', async () => {
      const root = await mkdtemp(join(tmpdir(), 'kr-limited-'));
      await cp(ROOT, root, { recursive: true });
      const { result, seen } = await copied(root, 'overlays/prod', { plain: false });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toContain('overlays/prod/kustomization.yaml');
      expect(seen[0]).toContain('base/kustomization.yaml');
      expect(seen[0]!.some((f) => f.startsWith('plain/') || f.startsWith('apps/'))).toBe(false);
      const { stdout } = await promisify(execFile)(KUSTOMIZE, ['build', join(root, 'overlays/prod')]);
      expect(result.objects).toEqual(parseManifests(stdout, 'kustomize'));
    });

    it('builds again on the whole tree when kustomize misses a file on the limited copy', async () => {
      const root = await mkdtemp(join(tmpdir(), 'kr-limited-link-'));
      await mkdir(join(root, 'shared/real'), { recursive: true });
      await writeFile(join(root, 'shared/real/kustomization.yaml'), 'resources: [cm.yaml]\n');
      await writeFile(join(root, 'shared/real/cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n');
      // A base reached through a symlinked directory: the reader follows the link, the copy keeps the
      // link but not what it points to.
      await symlink('real', join(root, 'shared/linked'));
      await mkdir(join(root, 'app'));
      await writeFile(join(root, 'app/kustomization.yaml'), 'resources: [../shared/linked]\n');
      const { result, seen } = await copied(root, 'app');
      expect(result.objects.map(subjectOf)).toEqual(['ConfigMap/shared']);
      expect(seen).toHaveLength(2);
      expect(seen[0]).not.toContain('shared/real/cm.yaml');
      expect(seen[1]).toContain('shared/real/cm.yaml');
    });
  });
});
