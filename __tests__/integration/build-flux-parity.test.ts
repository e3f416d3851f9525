// Where `build` must behave as Flux's kustomize-controller v1.9.6 (and source-controller, which
// makes the artifact it builds from) does, against the real kustomize binary (no cluster needed):
// the generated kustomization's strictness, `.sourceignore`, and references that stay inside the
// source root.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build, type BuildOptions } from '../../src/kustomize/build.js';
import { subjectOf } from '../../src/kustomize/parse.js';
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
