// Where `build` must behave as Flux's kustomize-controller v1.10.1 (and source-controller, which
// makes the artifact it builds from) does, against the real kustomize binary (no cluster needed):
// the generated kustomization's strictness, `.sourceignore`, and references that stay inside the
// source root.
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../../src/kustomize/build.js';
import { subjectOf } from '../../src/objects/kube.js';
import { KUSTOMIZE } from '../helpers/paths.js';

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-parity-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

async function subjects(root: string, path: string, fields: Partial<BuildOptions> = {}): Promise<string[]> {
  const built = await build({ root, path, kustomizeBin: KUSTOMIZE, ...fields });
  return built.objects.map(subjectOf).sort();
}

describe('generated kustomization (no kustomization.yaml), as strict as Flux', () => {
  it.each([
    {
      why: 'a Helm values file',
      file: 'replicaCount: 1\nimage: {repository: nginx}\n',
      error: 'app/values.yaml, document 1 (line 1): not a Kubernetes object (no apiVersion, kind or metadata)',
    },
    {
      why: 'a broken second document',
      file: `${cm('b')}---\ndata: [\n`,
      error: 'app/values.yaml, document 2: invalid YAML',
    },
    {
      why: 'a document without kind',
      file: 'apiVersion: v1\nmetadata: {name: b}\n',
      error: 'app/values.yaml, document 1 (line 1): no kind',
    },
    {
      why: 'a hidden file',
      name: '.values.yaml',
      file: 'a: 1\n',
      error: 'app/.values.yaml, document 1 (line 1): not a Kubernetes object',
    },
  ])('fails on $why, naming the file', async ({ name, file, error }) => {
    const root = await tree({ 'app/cm.yaml': cm('a'), [`app/${name ?? 'values.yaml'}`]: file });
    await expect(subjects(root, 'app')).rejects.toThrow(error);
  });

  it('lists empty and comment-only files (they add nothing) and leaves out other extensions', async () => {
    const root = await tree({
      'app/cm.yaml': cm('a'),
      'app/empty.yaml': '',
      'app/comment.yml': '# nothing yet\n',
      'app/docs.yaml': '---\n---\n',
      'app/UPPER.YAML': 'a: 1\n',
      'app/data.json': '{"a": 1}',
      'app/sub/list.yaml': `apiVersion: v1\nkind: List\nitems:\n- ${cm('b').replaceAll('\n', '\n  ')}`,
    });
    expect(await subjects(root, 'app')).toEqual(['ConfigMap/a', 'ConfigMap/b']);
  });
});

describe('.sourceignore, as source-controller leaves files out of the artifact', () => {
  it.each<{ why: string; files: Record<string, string>; want: string[] }>([
    {
      why: 'a root .sourceignore leaves a values file out of a generated kustomization',
      files: { '.sourceignore': 'apps/values.yaml\n', 'apps/values.yaml': 'a: 1\n' },
      want: ['ConfigMap/a'],
    },
    {
      why: 'a nested .sourceignore, scoped to its directory',
      files: { 'apps/.sourceignore': '/values.yaml\n', 'apps/values.yaml': 'a: 1\n' },
      want: ['ConfigMap/a'],
    },
    {
      why: 'a directory pattern with a negation that re-includes one file',
      files: {
        '.sourceignore': 'extra/\n!apps/extra/keep.yaml\n',
        'apps/extra/values.yaml': 'a: 1\n',
        'apps/extra/keep.yaml': cm('kept'),
      },
      want: ['ConfigMap/a', 'ConfigMap/kept'],
    },
    {
      why: '** patterns',
      files: { '.sourceignore': '**/helm/*.yaml\n', 'apps/x/helm/values.yaml': 'a: 1\n' },
      want: ['ConfigMap/a'],
    },
    {
      why: 'default exclusions without any .sourceignore',
      files: { 'apps/.github/workflows/ci.yaml': 'on: push\n', 'apps/.sops.yaml': 'creation_rules: []\n' },
      want: ['ConfigMap/a'],
    },
  ])('$why', async ({ files, want }) => {
    const root = await tree({ 'apps/cm.yaml': cm('a'), ...files });
    expect(await subjects(root, 'apps')).toEqual(want);
  });

  it.each([
    { why: 'without a .sourceignore, default exclusions leave out *.png', ignore: undefined, built: false },
    {
      why: 'with a .sourceignore, only the VCS exclusions remain (as in source-controller)',
      ignore: 'x\n',
      built: true,
    },
  ])('$why', async ({ ignore, built }) => {
    const root = await tree({
      ...(ignore === undefined ? {} : { '.sourceignore': ignore }),
      'apps/kustomization.yaml': 'configMapGenerator: [{name: img, files: [logo.png]}]\n',
      'apps/logo.png': 'not really a png',
    });
    const result = subjects(root, 'apps');
    if (built) expect((await result)[0]).toMatch(/^ConfigMap\/img-/);
    else await expect(result).rejects.toThrow(/logo\.png/);
  });

  it('an ignored file named in a kustomization is not there', async () => {
    const root = await tree({
      '.sourceignore': '*.secret.yaml\n',
      'apps/kustomization.yaml': 'resources: [cm.yaml, db.secret.yaml]\n',
      'apps/cm.yaml': cm('a'),
      'apps/db.secret.yaml': cm('db'),
    });
    await expect(subjects(root, 'apps')).rejects.toThrow(/db\.secret\.yaml/);
  });

  it('a path inside an ignored directory is refused, saying why', async () => {
    const root = await tree({ '.sourceignore': 'apps/\n', 'apps/cm.yaml': cm('a') });
    await expect(subjects(root, 'apps')).rejects.toThrow('path "apps" is excluded from the source by a .sourceignore');
  });
});

describe('references that leave a kustomization directory but stay inside the source root', () => {
  const shared = { 'shared/cm.yaml': cm('shared'), 'apps/prod/cm.yaml': cm('prod') };

  it('a resource ../../shared/cm.yaml, with its origin', async () => {
    const root = await tree({
      ...shared,
      'apps/prod/kustomization.yaml': 'resources: [cm.yaml, ../../shared/cm.yaml]\n',
    });
    // Origins of a kustomize build are traced when asked for (a failure's annotations ask).
    const built = await build({ root, path: 'apps/prod', kustomizeBin: KUSTOMIZE, traceOrigins: true });
    expect(built.objects.map(subjectOf).sort()).toEqual(['ConfigMap/prod', 'ConfigMap/shared']);
    expect([...built.origins.values()].sort()).toEqual(['apps/prod/cm.yaml', 'shared/cm.yaml']);
    expect(built.objects.every((o) => o.metadata.annotations === undefined)).toBe(true);
  });

  it('keeps the origin annotation the user asked for as kustomize writes it', async () => {
    const root = await tree({ ...shared, 'apps/prod/kustomization.yaml': 'resources: [../../shared/cm.yaml]\n' });
    const built = await build({
      root,
      path: 'apps/prod',
      kustomizeBin: KUSTOMIZE,
      buildMetadata: ['originAnnotations'],
    });
    expect(built.objects[0]?.metadata.annotations?.['config.kubernetes.io/origin']).toBe(
      'path: ../../shared/cm.yaml\n',
    );
  });

  it('a patch file ../common/p.yaml in a base, and a generator file from a sibling directory', async () => {
    const root = await tree({
      'apps/base/kustomization.yaml': [
        'resources: [cm.yaml]',
        'patches: [{path: ../common/p.yaml}]',
        'configMapGenerator: [{name: conf, files: [../common/app.properties]}]',
        '',
      ].join('\n'),
      'apps/base/cm.yaml': cm('web'),
      'apps/common/p.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {patched: "yes"}\n',
      'apps/common/app.properties': 'a=1\n',
      'apps/prod/kustomization.yaml': 'resources: [../base]\n',
    });
    const built = await build({ root, path: 'apps/prod', kustomizeBin: KUSTOMIZE });
    const byName = new Map(built.objects.map((o) => [o.metadata.name.replace(/-[a-z0-9]{10}$/, ''), o]));
    expect(byName.get('web')?.['data']).toEqual({ patched: 'yes' });
    expect(byName.get('conf')?.['data']).toEqual({ 'app.properties': 'a=1\n' });
  });

  it('a base whose kustomization file is a symlink to a file elsewhere inside the root', async () => {
    const root = await tree({
      'apps/base/cm.yaml': cm('a'),
      'apps/templates/base-kustomization.yaml': 'resources: [cm.yaml]\n',
      'apps/prod/kustomization.yaml': 'resources: [../base]\n',
    });
    await symlink('../templates/base-kustomization.yaml', join(root, 'apps/base/kustomization.yaml'));
    expect(await subjects(root, 'apps/prod')).toEqual(['ConfigMap/a']);
  });

  it('a symlink to a file elsewhere inside the root', async () => {
    const root = await tree({ ...shared, 'apps/prod/kustomization.yaml': 'resources: [link.yaml]\n' });
    await symlink('../../shared/cm.yaml', join(root, 'apps/prod/link.yaml'));
    expect(await subjects(root, 'apps/prod')).toEqual(['ConfigMap/shared']);
  });
});

describe('references that leave the source root are refused, naming the file and the entry', () => {
  const SECRET = 'do-not-leak-3f9a';
  async function withOutside(files: Record<string, string>) {
    const root = await tree(files);
    const outside = await mkdtemp(join(tmpdir(), 'kr-outside-'));
    await writeFile(join(outside, 'secret.yaml'), cm(SECRET));
    await writeFile(join(outside, 'secret.env'), `TOKEN=${SECRET}\n`);
    return { root, outside, up: `${'../'.repeat(40)}${outside.slice(1)}` };
  }

  it('a resource reached with ..', async () => {
    const { root, up } = await withOutside({ 'apps/cm.yaml': cm('a') });
    await writeFile(join(root, 'apps/kustomization.yaml'), `resources: [cm.yaml, ${up}/secret.yaml]\n`);
    await expect(subjects(root, 'apps')).rejects.toThrow(
      `apps/kustomization.yaml: resources entry "${up}/secret.yaml" leaves the source root`,
    );
  });

  it('an absolute generator env file', async () => {
    const { root, outside } = await withOutside({ 'apps/cm.yaml': cm('a') });
    const file = join(outside, 'secret.env');
    await writeFile(join(root, 'apps/kustomization.yaml'), `configMapGenerator: [{name: x, envs: [${file}]}]\n`);
    await expect(subjects(root, 'apps')).rejects.toThrow(
      `apps/kustomization.yaml: configMapGenerator[].envs entry "${file}" leaves the source root`,
    );
  });

  it('a symlink to a file outside, in a base', async () => {
    const { root, outside } = await withOutside({
      'apps/base/kustomization.yaml': 'resources: [cm.yaml]\npatches: [{path: p.yaml}]\n',
      'apps/base/cm.yaml': cm('a'),
      'apps/prod/kustomization.yaml': 'resources: [../base]\n',
    });
    await symlink(join(outside, 'secret.yaml'), join(root, 'apps/base/p.yaml'));
    await expect(subjects(root, 'apps/prod')).rejects.toThrow(
      'apps/base/kustomization.yaml: patches[].path entry "p.yaml" leaves the source root through a symlink',
    );
  });

  it('a base whose kustomization file is a symlink to a file outside', async () => {
    const { root, outside } = await withOutside({
      'apps/base/cm.yaml': cm('a'),
      'apps/prod/kustomization.yaml': 'resources: [../base]\n',
    });
    await writeFile(join(outside, 'k.yaml'), `resources: [cm.yaml]\n# ${SECRET}\n`);
    await symlink(join(outside, 'k.yaml'), join(root, 'apps/base/kustomization.yaml'));
    await expect(subjects(root, 'apps/prod')).rejects.toThrow(
      'apps/base/kustomization.yaml is a symlink that leaves the source root; it is not read',
    );
  });

  it.each([
    ['generators', 'apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: g}\nenvs: [%]\n', 'secret.env'],
    [
      'transformers',
      'apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: t}\npath: %\ntarget: {kind: ConfigMap}\n',
      'secret.yaml',
    ],
  ])('a file named in a %s plugin configuration (kustomize refuses it)', async (field, config, file) => {
    const { root, outside } = await withOutside({ 'apps/cm.yaml': cm('a') });
    await writeFile(join(root, 'apps/plugin.yaml'), config.replace('%', join(outside, file)));
    await writeFile(join(root, 'apps/kustomization.yaml'), `resources: [cm.yaml]\n${field}: [plugin.yaml]\n`);
    const error = await subjects(root, 'apps').then(
      () => new Error('built'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toMatch(/security; file .* is not in or below/);
    expect(error.message).not.toContain(SECRET);
  });
});

describe('kustomize’s messages about a file from outside its kustomization’s directory', () => {
  it('name the entry as written, not the copy', async () => {
    const root = await tree({
      'apps/kustomization.yaml': 'resources: [cm.yaml]\npatches: [{path: ../shared/p.json}]\n',
      'apps/cm.yaml': cm('a'),
      // A JSON 6902 patch needs a target; kustomize names the patch file when it has none.
      'shared/p.json': '[{"op": "add", "path": "/data", "value": {}}]\n',
    });
    const error = await subjects(root, 'apps').then(
      () => new Error('built'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toContain('must specify a target for JSON patch [path: "../shared/p.json"]');
    expect(error.message).not.toContain('.kr-refs-');
  });
});
