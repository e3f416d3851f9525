// Budgets on what a tree can make the runner do (issue 47, class 8): CEL cost, YAML shape before
// parsing, git trees before checkout, tree-chosen timeouts in an untrusted run.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { sanitizeKubeconfig } from '../../src/cluster/remote.js';
import { documentValues } from '../../src/flux/source-files.js';
import { CEL_LIMITS, celStatusReader, compileCel, evalReadyExpr } from '../../src/kstatus/cel.js';
import { parseYamlStream } from '../../src/objects/yaml.js';
import { yamlShapeOver } from '../../src/util/yaml-shape.js';
import { REPO } from '../helpers/paths.js';
import { bareRepository } from '../helpers/git-repos.js';
import type { GitRepositoryDef } from '../../src/flux/source-defs.js';
import { ExtractBudget } from '../../src/source/budget.js';
import { fetchGitRepository, treeSize } from '../../src/source/git.js';
import { cappedTimeout } from '../../src/source/tree-timeout.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

/** `depth` comprehensions, each inside the last, over a list of `width` elements. */
const nested = (depth: number, width: number): string => {
  const list = `[${Array.from({ length: width }, (_, i) => i).join(',')}]`;
  let body = 'true';
  for (let i = depth; i > 0; i--) body = `${list}.all(x${i}, ${body})`;
  return body;
};
/** A string doubled at each of `depth` nested map levels. */
const doubling = (depth: number): string => {
  let expr = `['ab']`;
  for (let i = 0; i < depth; i++) expr = `${expr}.map(s${i}, s${i} + s${i})`;
  return `size(${expr}[0]) > 0`;
};
/** A list doubled at each of `depth` nested levels. */
const listDoubling = (depth: number): string => {
  let expr = `[1]`;
  for (let i = 0; i < depth; i++) expr = `[${expr}].map(l${i}, l${i} + l${i})[0]`;
  return `size(${expr}) > 0`;
};

describe('CEL: a cost limit on every evaluation', () => {
  it.each<[string, string]>([
    ['nested comprehensions (1000^4 steps)', nested(4, 1000)],
    [
      'nested comprehensions over data the object holds',
      'self.items.all(a, self.items.all(b, self.items.all(c, a + b + c >= 0.0)))',
    ],
    ['a string doubled at each nested level', doubling(40)],
    ['a list doubled at each nested level', listDoubling(40)],
    [
      'exists_one and filter nested',
      `[${'1,'.repeat(999)}1].exists_one(a, [${'1,'.repeat(999)}1].filter(b, [${'1,'.repeat(99)}1].exists(c, c == 2)).size() == 1)`,
    ],
  ])('%s stops with a cost error naming the expression', (_, expr) => {
    const items = Array.from({ length: 400 }, (_, i) => i);
    let error: Error | undefined;
    try {
      evalReadyExpr(expr, { items }, {});
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).toBe('UserError');
    expect(error?.message).toMatch(/cost limit/);
    expect(error?.message).toContain(expr.slice(0, 40));
  });

  it.each<[string, string, boolean]>([
    ['a condition scan', "dep.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", true],
    [
      'two comprehensions one after the other',
      "dep.status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True')",
      true,
    ],
    ['a small nested comprehension', nested(2, 50), true],
  ])('%s still evaluates', (_, expr, want) => {
    const dep = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(evalReadyExpr(expr, {}, dep)).toBe(want);
  });

  it('the budget is per evaluation: many cheap evaluations do not add up', () => {
    const program = compileCel(nested(2, 100));
    for (let i = 0; i < 200; i++) expect(program({})).toBe(true);
  });

  it('a healthCheckExprs expression over its cost fails the object now, naming the expression', () => {
    const reader = celStatusReader([{ apiVersion: 'example.com/v1', kind: 'Thing', current: nested(3, 1000) }]);
    const got = reader({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { generation: 1 }, status: {} });
    expect(got?.status).toBe('Failed');
    expect(got?.message).toMatch(/healthCheckExprs: .*cost limit.*\[0,1,2/);
  });

  it.each<[string, string, RegExp]>([
    ['an expression longer than the bound', `${'1 + '.repeat(CEL_LIMITS.expressionLength / 4)}1 > 0`, /longer than/],
    ['a list literal past maxListElements', `size([${'1,'.repeat(2000)}1]) > 0`, /maxListElements|list/i],
    ['nesting past maxDepth', `${'('.repeat(100)}true${')'.repeat(100)}`, /maxDepth|depth/i],
  ])('%s is refused before evaluation', (_, expr, message) => {
    expect(() => compileCel(expr)).toThrow(message);
  });
});

describe('YAML: the shape is bounded before the parser sees it', () => {
  const small = { bytes: 1 << 20, documents: 50, depth: 20, blockDepth: 40 };
  const blockNest = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + '\n';
  const seqNest = (n: number) => Array.from({ length: n }, (_, i) => `${' '.repeat(i * 2)}-`).join('\n') + ' x\n';
  it.each<[string, string, RegExp | undefined]>([
    ['nested flow sequences', `${'['.repeat(30)}${']'.repeat(30)}`, /nested more than 20 levels deep/],
    ['nested flow mappings', `a: ${'{b: '.repeat(30)}1${'}'.repeat(30)}`, /nested more than 20 levels deep/],
    ['compact nested sequences on one line', `${'- '.repeat(30)}x\n`, /nested more than 20 levels deep/],
    ['complex keys and sequences mixed', `${'? - '.repeat(15)}x\n`, /nested more than 20 levels deep/],
    ['indented mappings', blockNest(50), /nested more than 40 levels deep/],
    ['indented mappings within the indentation bound are left to the parser', blockNest(30), undefined],
    ['indented sequences', seqNest(50), /nested more than 40 levels deep/],
    ['flow nesting across lines', `a:\n${'  [\n'.repeat(30)}`, /nested more than 20 levels deep/],
    [
      'flow inside block nesting',
      `${blockNest(30)}${' '.repeat(30)}x: ${'['.repeat(15)}`,
      /nested more than 40 levels deep/,
    ],
    ['empty documents', '---\n'.repeat(60), /holds more than 50 documents/],
    ['document end markers', '...\n'.repeat(60), /holds more than 50 documents/],
    ['documents with content', 'a: 1\n---\n'.repeat(60), /holds more than 50 documents/],
    ['too many bytes', `a: ${'x'.repeat(2 << 20)}\n`, /^larger than 1 MiB/],
    ['brackets in double-quoted scalars are text', 'a: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\" ["\n'.repeat(3), undefined],
    ['brackets in single-quoted scalars are text', `a: '${'['.repeat(30)}'' ['\n`, undefined],
    ['brackets inside a plain scalar are text', `a: b${'['.repeat(30)}\n`, undefined],
    ['brackets in a comment are text', `a: 1 # ${'['.repeat(30)}\n`, undefined],
    ['brackets in a block scalar are text', `a: |\n  ${'['.repeat(30)}\n  ${'- '.repeat(30)}\nb: 1\n`, undefined],
    ['a folded block scalar', `- >-\n    ${'{'.repeat(30)}\n- b\n`, undefined],
    ['a --- inside a block scalar is text', `a: |\n${'  ---\n'.repeat(60)}`, undefined],
    [
      'a manifest',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {app: a, tier: [x, y]}\ndata:\n  k: v\n',
      undefined,
    ],
    ['nesting at the bound', `${'['.repeat(19)}${']'.repeat(19)}`, undefined],
  ])('%s', (_, text, want) => {
    const over = yamlShapeOver(text, small);
    if (want === undefined) expect(over).toBeUndefined();
    else expect(over?.what).toMatch(want);
  });

  it('the default bounds pass every YAML file of this repository', async () => {
    const { execFileSync } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const files = execFileSync('git', ['ls-files', '*.yaml', '*.yml'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const over = files.filter((f) => yamlShapeOver(readFileSync(join(REPO, f), 'utf8')) !== undefined);
    expect(over).toEqual([]);
  });

  it.each<[string, string]>([
    ['1.2 MB of nested sequences', '['.repeat(600_000) + ']'.repeat(600_000)],
    ['1.2 MB of compact sequences', `${'- '.repeat(600_000)}x\n`],
    ['4 MB of empty documents', '---\n'.repeat(1_000_000)],
  ])('parseYamlStream refuses %s by name and line, without parsing it', (_, text) => {
    const docs = parseYamlStream(text, 'apps/bomb.yaml');
    expect(docs).toHaveLength(1);
    expect(docs[0]?.error).toMatch(
      /^apps\/bomb\.yaml(, document 1)?: (nested more than 256 levels deep|the stream holds more than 20,000 documents)/,
    );
    expect(docs[0]?.error).toMatch(/\(line \d+, found before parsing/);
  });

  it('the source scan finds nothing in a refused text, and the kubeconfig reader refuses it', () => {
    expect(documentValues(`${'---\n'.repeat(30_000)}apiVersion: v1\nkind: GitRepository\n`)).toEqual([]);
    expect(() => sanitizeKubeconfig(`clusters: ${'['.repeat(1000)}`, 'Secret apps/kc')).toThrow(
      /Secret apps\/kc, document 1: nested more than 256 levels deep/,
    );
  });
});

describe('git: what a fetch writes is in the run budget', () => {
  it.each<[string, string, { bytes: number; files: number }]>([
    ['nothing', '', { bytes: 0, files: 0 }],
    [
      'blobs, a link and a submodule',
      [
        '100644 blob 0123456789abcdef0123456789abcdef01234567 1073741824\tzeros.bin',
        '100644 blob 0123456789abcdef0123456789abcdef01234567       12\tdir/a b.yaml',
        '120000 blob 0123456789abcdef0123456789abcdef01234567        4\tlink',
        '160000 commit 0123456789abcdef0123456789abcdef01234567       -\tvendor/sub',
      ].join('\0') + '\0',
      { bytes: 1073741840, files: 4 },
    ],
    [
      'a path with a tab and a newline',
      '100644 blob 0123456789abcdef0123456789abcdef01234567 5\ta\tb\nc\0',
      { bytes: 5, files: 1 },
    ],
  ])('treeSize: %s', (_, out, want) => {
    expect(treeSize(out)).toEqual(want);
  });

  const def = (url: string): GitRepositoryDef => ({
    namespace: 'apps',
    name: 'bomb',
    url,
    file: 'apps/src.yaml',
    ref: { branch: 'main' },
  });
  const opts = { credentials: {}, secret: () => {} };

  it('a repository whose pack is small and whose tree is large is refused before checkout', async () => {
    // 32 MiB of zeros: a pack of a few tens of KiB, a checkout of 32 MiB.
    const repo = await bareRepository({ main: { 'zeros.bin': '\0'.repeat(32 << 20), 'a.yaml': 'a: 1\n' } });
    const budget = new ExtractBudget(8 << 20);
    const err = await fetchGitRepository(def(repo.url), { ...opts, budget }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(
      /GitRepository apps\/bomb.*budget for extracted files is spent.*2 files of 33554437 bytes/,
    );
    // Nothing was taken: the refusal came before the checkout.
    expect(budget.spent).toEqual({ bytes: 0, files: 0 });
  });

  it('a tree within the budget is fetched, and counted', async () => {
    const repo = await bareRepository({ main: { 'a.yaml': 'a: 1\n', 'b/c.yaml': 'c: 2\n' } });
    const budget = new ExtractBudget(16 << 20);
    const got = await fetchGitRepository(def(repo.url), { ...opts, budget });
    expect(budget.spent).toEqual({ bytes: 10, files: 2 });
    await got.cleanup();
  });

  it('two fetches of one run share the budget', async () => {
    const repo = await bareRepository({ main: { 'a.yaml': 'x'.repeat(6 << 20) } });
    const budget = new ExtractBudget(10 << 20);
    const first = await fetchGitRepository(def(repo.url), { ...opts, budget });
    await expect(fetchGitRepository(def(repo.url), { ...opts, budget })).rejects.toThrow(
      /budget for extracted files is spent/,
    );
    await first.cleanup();
  });
});

describe('timeouts a tree chooses', () => {
  const untrusted = { untrustedTree: { reason: 'preview', root: '/w' } };
  it.each<[string, number | undefined, Parameters<typeof cappedTimeout>[1], number | undefined]>([
    ['a trusted tree keeps its spec.timeout', 6 * 3600_000, {}, 6 * 3600_000],
    ['an untrusted tree: capped by the default of the timeout input', 6 * 3600_000, untrusted, 5 * 60_000],
    ['an untrusted tree: capped by the timeout input', 6 * 3600_000, { ...untrusted, timeout: 90_000 }, 90_000],
    ['an untrusted tree under the cap keeps its own', 30_000, { ...untrusted, timeout: 90_000 }, 30_000],
    ['no spec.timeout: the caller default', undefined, untrusted, undefined],
    // An unreadable timeout input is refused with the settings (settings.test.ts); 0s caps nothing.
    ['a zero timeout input: the default cap', 6 * 3600_000, { ...untrusted, timeout: 0 }, 5 * 60_000],
    [
      'with kustomizations (no timeout input): build-timeout caps',
      6 * 3600_000,
      { ...untrusted, buildLimits: { timeoutMs: 45_000 } },
      45_000,
    ],
    [
      'a trusted tree is not capped by build-timeout',
      6 * 3600_000,
      { buildLimits: { timeoutMs: 45_000 } },
      6 * 3600_000,
    ],
  ])('%s', (_, ms, settings, want) => {
    expect(cappedTimeout(ms, settings)).toBe(want);
  });
});
