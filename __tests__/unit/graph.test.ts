import { describe, expect, it } from 'vitest';
import { dependencyOrder, dependentsOf, runInDependencyOrder } from '../../src/flux/graph.js';
import type { KustomizationSpec } from '../../src/flux/types.js';
import { defaultSpec } from '../helpers/spec.js';

/** `ns/name` or `name` (in flux-system). */
function split(ref: string): { name: string; namespace: string } {
  const [first, second] = ref.split('/');
  return second === undefined
    ? { name: first ?? '', namespace: 'flux-system' }
    : { name: second, namespace: first ?? '' };
}

/** A minimal Kustomization `ref` depending on `deps` (each `ns/name` or `name`, defaulting to flux-system). */
function ks(ref: string, ...deps: string[]): KustomizationSpec {
  return defaultSpec({ ...split(ref), dependsOn: deps.map(split) });
}

/** Levels as `name` lists (namespace shown only when not flux-system). */
function names(levels: KustomizationSpec[][]): string[][] {
  return levels.map((level) => level.map((s) => (s.namespace === 'flux-system' ? s.name : `${s.namespace}/${s.name}`)));
}

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return (error as Error).message;
  }
  throw new Error('expected an Error');
}

describe('dependencyOrder', () => {
  it.each<[string, KustomizationSpec[], string[][]]>([
    ['empty', [], []],
    ['single', [ks('a')], [['a']]],
    ['chain', [ks('c', 'b'), ks('b', 'a'), ks('a')], [['a'], ['b'], ['c']]],
    ['diamond', [ks('d', 'b', 'c'), ks('b', 'a'), ks('c', 'a'), ks('a')], [['a'], ['b', 'c'], ['d']]],
    ['independent set keeps input order', [ks('z'), ks('m'), ks('a')], [['z', 'm', 'a']]],
    [
      'stable within levels',
      [ks('y', 'x'), ks('b'), ks('x'), ks('a', 'x'), ks('c')],
      [
        ['b', 'x', 'c'],
        ['y', 'a'],
      ],
    ],
    ['level is the longest path', [ks('c', 'a', 'b'), ks('b', 'a'), ks('a')], [['a'], ['b'], ['c']]],
    ['duplicate dependency entries', [ks('b', 'a', 'a'), ks('a')], [['a'], ['b']]],
    [
      'cross-namespace references',
      [ks('apps/web', 'infra/db', 'flux-system/crds'), ks('infra/db', 'crds'), ks('crds')],
      [['crds'], ['infra/db'], ['apps/web']],
    ],
    ['same name in two namespaces', [ks('apps/x', 'infra/x'), ks('infra/x')], [['infra/x'], ['apps/x']]],
  ])('%s', (_, specs, expected) => {
    expect(names(dependencyOrder(specs))).toEqual(expected);
  });

  it.each<[string, KustomizationSpec[], string[], string[]]>([
    [
      'unknown dependency',
      [ks('a', 'missing')],
      ["Kustomization flux-system/a (clusters/prod.yaml, document 1): dependency 'flux-system/missing' not found"],
      ['did you mean'],
    ],
    [
      'unknown dependency with a hint for another namespace',
      [ks('apps/web', 'db'), ks('infra/db')],
      ["dependency 'flux-system/db' not found (did you mean 'infra/db'? set dependsOn[].namespace)"],
      [],
    ],
    [
      'several unknown dependencies, all reported',
      [ks('a', 'x'), ks('b', 'y')],
      ["flux-system/a (clusters/prod.yaml, document 1): dependency 'flux-system/x'", "dependency 'flux-system/y'"],
      [],
    ],
    [
      'self-dependency',
      [ks('a', 'a')],
      ['Kustomization flux-system/a (clusters/prod.yaml, document 1): depends on itself'],
      ['cycle'],
    ],
    [
      'one cycle',
      [ks('a', 'c'), ks('b', 'a'), ks('c', 'b'), ks('d', 'a')],
      ['dependency cycle flux-system/a → flux-system/c → flux-system/b → flux-system/a'],
      ['flux-system/d →', 'also caught'],
    ],
    [
      'two cycles',
      [ks('a', 'b'), ks('b', 'a'), ks('x', 'ns/y'), ks('ns/y', 'x')],
      [
        '2 problems',
        'dependency cycle flux-system/a → flux-system/b → flux-system/a',
        'dependency cycle flux-system/x → ns/y → flux-system/x',
      ],
      [],
    ],
    [
      'a cycle plus an unknown dependency',
      [ks('a', 'b', 'gone'), ks('b', 'a')],
      [
        '2 problems',
        "dependency 'flux-system/gone' not found",
        'dependency cycle flux-system/a → flux-system/b → flux-system/a',
      ],
      [],
    ],
    [
      'self-dependency, unknown dependency and cycle together',
      [ks('s', 's'), ks('u', 'nope'), ks('p', 'q'), ks('q', 'p')],
      [
        '3 problems',
        'flux-system/s (clusters/prod.yaml, document 1): depends on itself',
        "'flux-system/nope' not found",
        'flux-system/p → flux-system/q → flux-system/p',
      ],
      [],
    ],
    [
      'a loop with a shortcut is reported once',
      [ks('a', 'b'), ks('b', 'a', 'c'), ks('c', 'a')],
      [
        '1 problem:',
        'dependency cycle flux-system/a → flux-system/b → flux-system/a (also caught in the same loop: flux-system/c)',
      ],
      [],
    ],
    [
      'duplicate Kustomization',
      [ks('a'), ks('a')],
      ['Kustomization flux-system/a (clusters/prod.yaml, document 1): defined twice'],
      [],
    ],
  ])('%s', (_, specs, present, absent) => {
    const message = errorOf(() => dependencyOrder(specs));
    for (const text of present) expect(message).toContain(text);
    for (const text of absent) expect(message).not.toContain(text);
  });

  it('prints each cycle once', () => {
    const message = errorOf(() => dependencyOrder([ks('a', 'b'), ks('b', 'c'), ks('c', 'a')]));
    expect(message.match(/dependency cycle/g)).toHaveLength(1);
  });
});

describe('dependentsOf', () => {
  const graph = [
    ks('web', 'api'),
    ks('api', 'db'),
    ks('db', 'infra/crds'),
    ks('infra/crds'),
    ks('monitoring', 'infra/crds'),
    ks('docs'),
    ks('edge', 'web', 'db'),
  ];

  it.each<[string, string[]]>([
    [
      'infra/crds',
      ['flux-system/db', 'flux-system/monitoring', 'flux-system/api', 'flux-system/web', 'flux-system/edge'],
    ],
    ['flux-system/db', ['flux-system/api', 'flux-system/web', 'flux-system/edge']],
    ['flux-system/api', ['flux-system/web', 'flux-system/edge']],
    ['flux-system/web', ['flux-system/edge']],
    ['flux-system/edge', []],
    ['flux-system/docs', []],
    ['flux-system/unknown', []],
  ])('%s', (failed, expected) => {
    expect(dependentsOf(graph, failed)).toEqual(expected);
  });

  it('throws on an invalid graph', () => {
    expect(() => dependentsOf([ks('a', 'a')], 'flux-system/a')).toThrow(/depends on itself/);
  });
});

describe('runInDependencyOrder', () => {
  /** Runs `specs` with each one's duration in ticks (a microtask chain), recording start and end events. */
  async function trace(specs: KustomizationSpec[], ticks: Record<string, number>, limit: number) {
    const events: string[] = [];
    const results = await runInDependencyOrder(dependencyOrder(specs).flat(), limit, async (spec, done) => {
      events.push(`start ${spec.name} (saw ${[...done.keys()].map((k) => k.split('/')[1]).join(',') || '-'})`);
      for (let i = 0; i < (ticks[spec.name] ?? 1) * 10; i++) await Promise.resolve();
      events.push(`end ${spec.name}`);
      return spec.name.toUpperCase();
    });
    return { events, results };
  }

  it('waits for what `after` names too (a child for its parent), whatever its outcome', async () => {
    const events: string[] = [];
    const order = dependencyOrder([ks('child'), ks('parent'), ks('other')]).flat();
    await runInDependencyOrder(
      order,
      4,
      async (spec) => {
        events.push(`start ${spec.name}`);
        for (let i = 0; i < (spec.name === 'parent' ? 50 : 10); i++) await Promise.resolve();
        events.push(`end ${spec.name}`);
        if (spec.name === 'parent') return 'failed';
        return 'ok';
      },
      (spec) => (spec.name === 'child' ? ['flux-system/parent'] : []),
    );
    expect(events.indexOf('start child')).toBeGreaterThan(events.indexOf('end parent'));
    // Nothing else waits: the other one starts at once.
    expect(events.slice(0, 2)).toEqual(['start parent', 'start other']);
  });

  it('starts each one when its own dependencies end, not when a whole level ends', async () => {
    // a ← b ← c, and d independent but slow: b must not wait for d.
    const { events, results } = await trace([ks('c', 'b'), ks('b', 'a'), ks('a'), ks('d')], { d: 10 }, 4);
    expect(events).toEqual([
      'start a (saw -)',
      'start d (saw -)',
      'end a',
      'start b (saw a)',
      'end b',
      'start c (saw a,b)',
      'end c',
      'end d',
    ]);
    expect([...results.entries()].sort()).toEqual([
      ['flux-system/a', 'A'],
      ['flux-system/b', 'B'],
      ['flux-system/c', 'C'],
      ['flux-system/d', 'D'],
    ]);
  });

  it('never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const specs = ['a', 'b', 'c', 'd', 'e'].map((n) => ks(n));
    await runInDependencyOrder(specs, 2, async () => {
      running += 1;
      peak = Math.max(peak, running);
      for (let i = 0; i < 5; i++) await Promise.resolve();
      running -= 1;
    });
    expect(peak).toBe(2);
  });

  it('resolves at once for no Kustomizations and rejects with the first error', async () => {
    expect((await runInDependencyOrder([], 4, () => Promise.resolve(1))).size).toBe(0);
    await expect(
      runInDependencyOrder([ks('a'), ks('b', 'a')], 4, (s) =>
        s.name === 'a' ? Promise.reject(new Error('boom')) : Promise.resolve(1),
      ),
    ).rejects.toThrow('boom');
  });

  it('starts a Kustomization whose dependency is not in the list (another job reconciles it)', async () => {
    const seen: string[] = [];
    const results = await runInDependencyOrder([ks('b', 'a'), ks('c', 'b')], 4, (spec) => {
      seen.push(spec.name);
      return Promise.resolve(1);
    });
    expect(seen).toEqual(['b', 'c']);
    expect([...results.keys()]).toEqual(['flux-system/b', 'flux-system/c']);
  });

  it('rejects instead of hanging when Kustomizations of the list wait for each other', async () => {
    await expect(runInDependencyOrder([ks('a', 'b'), ks('b', 'a')], 4, () => Promise.resolve(1))).rejects.toThrow(
      'Kustomizations that can never start (unknown dependency?): flux-system/a, flux-system/b',
    );
  });
});
