import { describeSpec } from './support.js';
import type { KustomizationSpec } from './types.js';

/**
 * Ordering Kustomizations by `spec.dependsOn`. Flux itself polls dependants and never detects cycles; in CI
 * everything is known up front, so the graph is checked as a whole, then
 * each Kustomization starts as soon as its dependencies have finished.
 */

/** `namespace/name`, the key a Kustomization is known by. */
function keyOf(spec: { name: string; namespace: string }): string {
  return `${spec.namespace}/${spec.name}`;
}

interface Graph {
  /** Specs by key; the first one wins when a key is defined twice (that is reported as a problem). */
  byKey: Map<string, KustomizationSpec>;
  /** Input position of each key. */
  position: Map<string, number>;
  /** Valid edges: key → keys it depends on, without duplicates, in declaration order. */
  deps: Map<string, string[]>;
  problems: string[];
}

function buildGraph(specs: readonly KustomizationSpec[]): Graph {
  const byKey = new Map<string, KustomizationSpec>();
  const position = new Map<string, number>();
  const problems: string[] = [];
  specs.forEach((spec, index) => {
    const key = keyOf(spec);
    const first = byKey.get(key);
    if (first === undefined) {
      byKey.set(key, spec);
      position.set(key, index);
    } else {
      problems.push(`${describeSpec(spec)}: defined twice; first in ${describeSpec(first)}`);
    }
  });

  const deps = new Map<string, string[]>();
  for (const [key, spec] of byKey) {
    const targets: string[] = [];
    for (const dep of spec.dependsOn) {
      const target = keyOf(dep);
      if (target === key) {
        problems.push(`${describeSpec(spec)}: depends on itself`);
      } else if (!byKey.has(target)) {
        problems.push(`${describeSpec(spec)}: dependency '${target}' not found${hintFor(dep.name, byKey)}`);
      } else if (!targets.includes(target)) {
        targets.push(target);
      }
    }
    deps.set(key, targets);
  }
  return { byKey, position, deps, problems };
}

/** Points at Kustomizations of the same name in other namespaces: a forgotten `namespace` is a common slip. */
function hintFor(name: string, byKey: ReadonlyMap<string, KustomizationSpec>): string {
  const others = [...byKey.values()].filter((s) => s.name === name).map(keyOf);
  if (others.length === 0) return '';
  return ` (did you mean ${others.map((k) => `'${k}'`).join(' or ')}? set dependsOn[].namespace)`;
}

/** Strongly connected components with more than one member (Tarjan), each in input order, ordered by their first member. */
function cyclicComponents(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;

  const visit = (key: string): void => {
    index.set(key, next);
    low.set(key, next);
    next += 1;
    stack.push(key);
    onStack.add(key);
    for (const target of graph.deps.get(key) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(key, Math.min(low.get(key) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(key, Math.min(low.get(key) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(key) === index.get(key)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== key);
      if (component.length > 1) components.push(component);
    }
  };

  for (const key of graph.byKey.keys()) if (!index.has(key)) visit(key);

  const pos = (key: string): number => graph.position.get(key) ?? 0;
  for (const component of components) component.sort((a, b) => pos(a) - pos(b));
  return components.sort((a, b) => pos(a[0] ?? '') - pos(b[0] ?? ''));
}

/** One cycle through the component's first member, following dependencies in declaration order. */
function cycleIn(component: readonly string[], graph: Graph): string[] {
  const start = component[0] ?? '';
  const members = new Set(component);
  const seen = new Set<string>();
  const path: string[] = [];
  const walk = (key: string): boolean => {
    path.push(key);
    seen.add(key);
    for (const target of graph.deps.get(key) ?? []) {
      if (target === start) return true;
      if (members.has(target) && !seen.has(target) && walk(target)) return true;
    }
    path.pop();
    return false;
  };
  walk(start);
  return path;
}

function cycleProblem(component: readonly string[], graph: Graph): string {
  const cycle = cycleIn(component, graph);
  const first = graph.byKey.get(cycle[0] ?? '');
  const where = first === undefined ? '' : `${describeSpec(first)}: `;
  const rest = component.filter((k) => !cycle.includes(k));
  const also = rest.length > 0 ? ` (also caught in the same loop: ${rest.join(', ')})` : '';
  return `${where}dependency cycle ${[...cycle, cycle[0] ?? ''].join(' → ')}${also}`;
}

/**
 * Execution levels: level 0 has no dependencies, level n depends only on earlier levels (and on at least one
 * Kustomization of level n-1). Within a level the input order is kept. Throws one Error listing every problem:
 * duplicate Kustomizations, unknown dependencies, self-dependencies and cycles.
 */
export function dependencyOrder(specs: readonly KustomizationSpec[]): KustomizationSpec[][] {
  const graph = buildGraph(specs);
  const problems = [...graph.problems, ...cyclicComponents(graph).map((c) => cycleProblem(c, graph))];
  if (problems.length > 0) {
    const noun = problems.length === 1 ? 'problem' : 'problems';
    throw new Error(
      `Kustomization dependencies: ${String(problems.length)} ${noun}:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }

  // The graph is acyclic now, so the recursion ends.
  const level = new Map<string, number>();
  const levelOf = (key: string): number => {
    const known = level.get(key);
    if (known !== undefined) return known;
    const value = Math.max(-1, ...(graph.deps.get(key) ?? []).map(levelOf)) + 1;
    level.set(key, value);
    return value;
  };

  const levels: KustomizationSpec[][] = [];
  for (const [key, spec] of graph.byKey) {
    const n = levelOf(key);
    while (levels.length <= n) levels.push([]);
    levels[n]?.push(spec);
  }
  return levels;
}

/**
 * Every Kustomization that depends on `failed` (`namespace/name`), directly or through others, as `namespace/name`
 * in execution order; `failed` itself is not included. Throws like {@link dependencyOrder} on an invalid graph.
 */
export function dependentsOf(specs: readonly KustomizationSpec[], failed: string): string[] {
  const order = dependencyOrder(specs).flat().map(keyOf);
  const affected = new Set<string>([failed]);
  // Execution order puts every dependency before its dependants, so one pass finds the whole closure.
  const dependsOn = new Map(specs.map((s) => [keyOf(s), s.dependsOn.map(keyOf)]));
  return order.filter((key) => {
    if (key === failed) return false;
    const hit = (dependsOn.get(key) ?? []).some((d) => affected.has(d));
    if (hit) affected.add(key);
    return hit;
  });
}

/**
 * Runs `run` for every Kustomization of `order` (execution order from {@link dependencyOrder}), each as
 * soon as all its dependencies have finished, whatever their outcome, with at most `limit` at once.
 * Unlike a level-by-level run, a slow Kustomization holds back only its own dependants. `run` sees the
 * results so far, so it can decide from its dependencies' outcomes. Resolves with every result by
 * `namespace/name`; rejects on the first rejection of `run`.
 */
export function runInDependencyOrder<T>(
  order: readonly KustomizationSpec[],
  limit: number,
  run: (spec: KustomizationSpec, results: ReadonlyMap<string, T>) => Promise<T>,
  /** More Kustomizations (`namespace/name`) to wait for, whatever their outcome (a child's parent). */
  after: (spec: KustomizationSpec) => readonly string[] = () => [],
): Promise<Map<string, T>> {
  const results = new Map<string, T>();
  const started = new Set<string>();
  // A dependency outside `order` (reconciled by another job) does not hold a Kustomization back here.
  const inOrder = new Set(order.map(keyOf));
  let running = 0;
  let failed = false;
  return new Promise((resolve, reject) => {
    const pump = () => {
      if (failed) return;
      if (results.size === order.length) {
        resolve(results);
        return;
      }
      for (const spec of order) {
        if (running >= limit) return;
        const key = keyOf(spec);
        const waits = [...spec.dependsOn.map(keyOf), ...after(spec)];
        if (started.has(key) || !waits.every((k) => results.has(k) || !inOrder.has(k))) continue;
        started.add(key);
        running += 1;
        run(spec, results).then(
          (result) => {
            results.set(key, result);
            running -= 1;
            pump();
          },
          (err: unknown) => {
            failed = true;
            reject(err instanceof Error ? err : new Error(String(err)));
          },
        );
      }
      if (running === 0) {
        const stuck = order.filter((s) => !started.has(keyOf(s))).map(keyOf);
        failed = true;
        reject(new Error(`Kustomizations that can never start (unknown dependency?): ${stuck.join(', ')}`));
      }
    };
    pump();
  });
}
