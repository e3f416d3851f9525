// Each Kustomization's view of what a preview would create (issue 34): its dependencies', never a sibling's.
import { describe, expect, it } from 'vitest';
import type { KustomizationSpec } from '../../src/flux/types.js';
import type { Logger, RunContext } from '../../src/reconcile/context.js';
import { PreviewViews } from '../../src/reconcile/would-create.js';
import { defaultSpec } from '../helpers/spec.js';

const SERVER = 'https://management.test';
const log: Logger = { info: () => undefined, group: (_t, fn) => fn() };
const spec = (name: string, dependsOn: string[] = [], fields: Partial<KustomizationSpec> = {}) =>
  defaultSpec({ name, dependsOn: dependsOn.map((d) => ({ name: d, namespace: 'flux-system' })), ...fields });

function viewsOf(specs: KustomizationSpec[]): PreviewViews {
  const ctx = { client: { server: SERVER } } as unknown as RunContext;
  return new PreviewViews(ctx, new Map(specs.map((s) => [`${s.namespace}/${s.name}`, s])), () => true);
}

describe('PreviewViews', () => {
  it('gives a Kustomization what its dependencies, directly or not, would create, and nothing of a sibling', () => {
    const root = spec('root');
    const mid = spec('mid', ['root']);
    const leaf = spec('leaf', ['mid']);
    const sibling = spec('sibling', ['root']);
    const views = viewsOf([root, mid, leaf, sibling]);

    views.viewOf(root, log).get(SERVER)?.namespaces.add('team-a');
    const midView = views.viewOf(mid, log).get(SERVER);
    const siblingView = views.viewOf(sibling, log).get(SERVER);
    // Both started after root: both see team-a. What one adds (its own stages) the other never sees.
    expect([...(midView?.namespaces ?? [])]).toEqual(['team-a']);
    midView?.namespaces.add('team-b');
    siblingView?.namespaces.add('team-c');
    siblingView?.kinds.add('example.com/Gate');
    expect([...(siblingView?.namespaces ?? [])].sort()).toEqual(['team-a', 'team-c']);

    const leafView = views.viewOf(leaf, log).get(SERVER);
    expect([...(leafView?.namespaces ?? [])].sort()).toEqual(['team-a', 'team-b']);
    expect([...(leafView?.kinds ?? [])]).toEqual([]);
    // A copy: the leaf's stages do not reach its dependencies' views.
    leafView?.namespaces.add('team-d');
    expect([...(midView?.namespaces ?? [])].sort()).toEqual(['team-a', 'team-b']);
  });

  it('foresees other Kustomizations only on the run cluster, and keeps remote clusters apart', () => {
    const remote = spec('remote', [], { kubeConfig: { secretRef: { name: 'kc' } } });
    const after = spec('after', ['remote']);
    const views = viewsOf([remote, after]);
    const remoteView = views.viewOf(remote, log);
    expect(remoteView.get(SERVER)).toBeUndefined();
    remoteView.set('https://remote.test', { namespaces: new Set(['far']), kinds: new Set() });
    const afterView = views.viewOf(after, log);
    expect([...(afterView.get('https://remote.test')?.namespaces ?? [])]).toEqual(['far']);
    expect(afterView.get(SERVER)?.foresee).toBeTypeOf('function');
  });
});
