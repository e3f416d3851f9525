// Hostile trees against the real kustomize binary: the build ends with a clear error within its
// bounds (no cluster needed).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { build } from '../../src/kustomize/build.js';
import { generateMalformed } from '../helpers/malformed.js';
import { isUserError } from '../../src/util/user-error.js';
import { KUSTOMIZE } from '../helpers/paths.js';

async function tree(files: Record<string, string | undefined>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kr-hostile-'));
  for (const [path, text] of Object.entries(files)) {
    if (text === undefined) continue;
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

const CM = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n';
const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
// A 600-byte "billion laughs" patch: kustomize expands it without bound (1.3 GB after 5 s).
const ALIAS_BOMB_PATCH = [
  'resources: [cm.yaml]',
  'patches:',
  '- patch: |',
  '    apiVersion: v1',
  '    kind: ConfigMap',
  '    metadata: {name: a}',
  '    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...levels.slice(1).map((l, i) => `    ${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(',')}]`),
  '',
].join('\n');

/** A ConfigMap whose data holds itself (an alias inside the node it names). */
const LOOP = `${CM}data: &self\n  again: *self\n`;

/**
 * A stand-in for a kustomize that a tree drives into endless work: every way known to do that to
 * the real one (alias bombs in resources, patches and nested kustomizations) is refused before it
 * runs, so the bounds are proven with a process that behaves like it, started the same way.
 */
async function runaway(behaviour: 'memory' | 'time'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kr-runaway-'));
  const bin = join(dir, 'kustomize');
  const js =
    behaviour === 'memory'
      ? 'const a = []; setInterval(() => a.push(Buffer.alloc(32 * 1024 * 1024, 1)), 20)'
      : 'setInterval(() => {}, 1000)';
  await writeFile(bin, `#!/bin/sh\nexec "${process.execPath}" -e '${js}'\n`, { mode: 0o755 });
  return bin;
}

describe('build limits', () => {
  it('a normal build passes well within tight bounds', async () => {
    const root = await tree({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': CM });
    const built = await build({
      root,
      path: 'app',
      plain: false,
      kustomizeBin: KUSTOMIZE,
      limits: { timeoutMs: 60_000, memoryBytes: 256 * 1024 ** 2 },
    });
    expect(built.objects.map((o) => o.metadata.name)).toEqual(['a']);
  });

  it.runIf(process.platform === 'linux')('stops kustomize when its memory passes the bound', async () => {
    const root = await tree({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': CM });
    await expect(
      build({
        root,
        path: 'app',
        plain: false,
        kustomizeBin: await runaway('memory'),
        limits: { timeoutMs: 100_000, memoryBytes: 256 * 1024 ** 2 },
      }),
    ).rejects.toThrow(/^kustomize build app used more than 256 MiB of memory and was stopped .*build-memory-limit/);
  });

  it('stops kustomize when it runs past the time bound', async () => {
    const root = await tree({ 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': CM });
    await expect(
      build({
        root,
        path: 'app',
        plain: false,
        kustomizeBin: await runaway('time'),
        limits: { timeoutMs: 1000, memoryBytes: 64 * 1024 ** 3 },
      }),
    ).rejects.toThrow(/^kustomize build app did not finish within 1s and was stopped; .*build-timeout/);
  });

  it.each([
    {
      why: 'content after "..." in a resource',
      files: { 'app/kustomization.yaml': 'resources: [cm.yaml]\n', 'app/cm.yaml': `${CM}...\ngarbage: here\n` },
      error: 'app/cm.yaml, document 2: content after the document end marker "..." (line 5)',
    },
    {
      why: 'a List whose items is not a list',
      files: {
        'app/kustomization.yaml': 'resources: [l.yaml, cm.yaml]\n',
        'app/l.yaml': 'apiVersion: v1\nkind: List\nitems: "x"\n',
        'app/cm.yaml': CM,
      },
      error: 'app/l.yaml, document 1: kind List: items must be a list of objects, got the text "x"',
    },
    {
      why: 'a List whose items is not a list, in a generated kustomization',
      files: { 'app/l.yaml': 'apiVersion: v1\nkind: ConfigMapList\nitems: 3\n', 'app/cm.yaml': CM },
      error: 'app/l.yaml, document 1: kind ConfigMapList: items must be a list of objects, got the number 3',
    },
    {
      why: 'an alias bomb in a nested kustomization',
      files: {
        'app/kustomization.yaml': 'resources: [base]\n',
        'app/base/kustomization.yaml': `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [${'*a, '.repeat(9)}*a]\nc: &c [${'*b, '.repeat(9)}*b]\nd: [${'*c, '.repeat(99)}*c]\n`,
      },
      error: 'app/base/kustomization.yaml, document 1: too many YAML aliases',
    },
    {
      why: 'deep nesting in a resource',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\n',
        'app/cm.yaml': `${CM}data: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}\n`,
      },
      error: 'app/cm.yaml, document 1: nested more than 256 levels deep',
    },
    {
      why: 'a duplicate key in a patch file',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n- path: p.yaml\n',
        'app/cm.yaml': CM,
        'app/p.yaml': `${CM}data: {x: "1", x: "2"}\n`,
      },
      error: 'app/p.yaml, document 1: key "x" appears twice in one mapping (line 4)',
    },
    {
      why: 'a 600-byte alias bomb in an inline patch (kustomize: 1.3 GB after 5 s)',
      files: { 'app/kustomization.yaml': ALIAS_BOMB_PATCH, 'app/cm.yaml': CM },
      error: 'app/kustomization.yaml: patches[0].patch, document 1: too many YAML aliases',
    },
    {
      why: 'an alias bomb in an inline strategic merge patch',
      files: {
        'app/kustomization.yaml': ALIAS_BOMB_PATCH.replace('patches:\n- patch: |', 'patchesStrategicMerge:\n- |'),
        'app/cm.yaml': CM,
      },
      error: 'patchesStrategicMerge[0], document 1: too many YAML aliases',
    },
    {
      // kustomize (yaml.v3) recurses until its stack is gone: a Go stack dump naming no file.
      why: 'an alias inside the node it names, in a resource',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml, loop.yaml]\n',
        'app/cm.yaml': CM,
        'app/loop.yaml': LOOP,
      },
      error:
        'app/loop.yaml, document 1: the YAML alias *self at line 5 lies inside the node it names (&self, from line 5)',
    },
    {
      why: 'an alias inside the node it names, in a plain directory (the build without kustomize)',
      files: { 'app/cm.yaml': CM, 'app/sub/loop.yaml': LOOP },
      error: 'app/sub/loop.yaml, document 1: the YAML alias *self at line 5',
    },
    {
      why: 'an alias inside the node it names, in a patch file',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n- path: p.yaml\n',
        'app/cm.yaml': CM,
        'app/p.yaml': LOOP,
      },
      error: 'app/p.yaml, document 1: the YAML alias *self at line 5',
    },
    {
      why: 'an alias inside the node it names, in a replacements file',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\nreplacements:\n- path: r.yaml\n',
        'app/cm.yaml': CM,
        'app/r.yaml': '- &r\n  source: {kind: ConfigMap, name: a, fieldPath: metadata.name}\n  targets: [*r]\n',
      },
      error: 'app/r.yaml, document 1: the YAML alias *r at line 3 lies inside the node it names (&r, from line 2)',
    },
    {
      why: 'an alias inside the node it names, in a component',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\ncomponents: [../comp]\n',
        'app/cm.yaml': CM,
        'comp/kustomization.yaml':
          'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [loop.yaml]\n',
        'comp/loop.yaml': LOOP.replace('name: a', 'name: b'),
      },
      error: 'comp/loop.yaml, document 1: the YAML alias *self at line 5',
    },
    {
      why: 'an alias inside the node it names, in an inline transformer configuration',
      files: {
        'app/kustomization.yaml':
          'resources: [cm.yaml]\ntransformers:\n- |\n  apiVersion: builtin\n  kind: LabelTransformer\n  metadata: {name: l}\n  labels: &l {a: *l}\n',
        'app/cm.yaml': CM,
      },
      error: 'app/kustomization.yaml: transformers[0], document 1: the YAML alias *l at line 4',
    },
    {
      why: 'a billion laughs in a replacements file',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\nreplacements:\n- path: r.yaml\n',
        'app/cm.yaml': CM,
        'app/r.yaml': ALIAS_BOMB_PATCH.split('\n')
          .slice(6)
          .map((l) => l.slice(4))
          .join('\n'),
      },
      error: 'app/r.yaml, document 1: too many YAML aliases: expanding them adds more than 100000 nodes',
    },
    {
      why: 'a JSON patch with an unknown op, inline',
      files: {
        'app/kustomization.yaml':
          'resources: [cm.yaml]\npatches:\n- patch: |\n    - op: explode\n      path: /data/x\n  target: {kind: ConfigMap}\n',
        'app/cm.yaml': CM,
      },
      error:
        'app/kustomization.yaml: patches[0].patch: operation 1: op "explode" is not one of add, remove, replace, move, copy, test',
    },
    {
      why: 'a JSON patch file whose path lacks its "/"',
      files: {
        'app/kustomization.yaml': 'resources: [cm.yaml]\npatches:\n- path: p.yaml\n  target: {kind: ConfigMap}\n',
        'app/cm.yaml': CM,
        'app/p.yaml': '- op: add\n  path: data/x\n  value: "1"\n',
      },
      error: 'app/p.yaml: operation 1 (add): path "data/x" must start with "/"',
    },
  ])('refuses $why before kustomize runs, naming the file', async ({ files, error }) => {
    const root = await tree(files);
    await expect(build({ root, path: 'app', kustomizeBin: KUSTOMIZE })).rejects.toThrow(error);
  });

  it('refuses a recursive alias in a plain directory when kustomize builds it too', async () => {
    const root = await tree({ 'app/cm.yaml': CM, 'app/loop.yaml': LOOP });
    await expect(build({ root, path: 'app', kustomizeBin: KUSTOMIZE, plain: false })).rejects.toThrow(
      'app/loop.yaml, document 1: the YAML alias *self at line 5 lies inside the node it names',
    );
  });

  it('cuts a long kustomize error to its first lines with a count', async () => {
    const names = Array.from({ length: 400 }, (_, i) => `missing-${i}-${'x'.repeat(200)}.yaml`);
    const root = await tree({ 'app/kustomization.yaml': `resources:\n${names.map((n) => `- ${n}\n`).join('')}` });
    const err = await build({ root, path: 'app', kustomizeBin: KUSTOMIZE }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^kustomize build app failed: /);
    expect((err as Error).message.length).toBeLessThan(12_000);
  });
});

describe('generated malformed trees through the real kustomize', () => {
  // A sample of the unit suite's generated inputs (see __tests__/helpers/malformed.ts), built for
  // real: the kustomization family as app/kustomization.yaml, the manifest family as its resource.
  const cases = generateMalformed()
    .filter((c) => c.family === 'kustomization' || c.family === 'manifest')
    .filter((c) => c.text.length < 200_000)
    .filter((_, i) => i % 3 === 0);

  it.each(cases.map((c) => [`${c.family}: ${c.name}`, c] as const))('%s', async (_, c) => {
    const files: Record<string, string> =
      c.family === 'kustomization'
        ? {
            'app/kustomization.yaml': c.text,
            'app/deployment.yaml': CM,
            'app/patch.yaml': CM,
            'app/settings.env': 'a=b\n',
          }
        : { 'app/kustomization.yaml': 'resources: [all.yaml]\n', 'app/all.yaml': c.text };
    const root = await tree(files);
    const result = await build({
      root,
      path: 'app',
      kustomizeBin: KUSTOMIZE,
      limits: { timeoutMs: 30_000, memoryBytes: 1024 ** 3 },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (result === undefined) return;
    expect(result).toBeInstanceOf(Error);
    // Ours, not a crash (a TypeError, a RangeError): kustomize refusing the tree is the user's to fix.
    expect(['Error', 'UserError', 'YamlError']).toContain((result as Error).constructor.name);
    const message = (result as Error).message;
    if (message.startsWith('kustomize build app failed')) expect(isUserError(result)).toBe(true);
    expect(message).toMatch(/^(kustomize build app |app\/)/);
    expect(message.length).toBeLessThanOrEqual(12_000);
    expect(message).not.toMatch(/goroutine \d+ \[|\n\s+at .+:\d+:\d+|Maximum call stack/);
  });
});
