// The Flux files the hostile-PR suite's trees are made of (__tests__/attack/): the checkout's
// GitRepository, Kustomizations built from it, ConfigMaps, and the BASE tree most cases start from.

/** A checkout as Flux's bootstrap defines it: the GitRepository flux-system/flux-system of `repo`, branch main. */
export const checkout = (repo: string) => `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1m, url: https://github.com/${repo}, ref: {branch: main}}
`;

/** This checkout: the GitRepository of org/repo. */
export const CHECKOUT = checkout('org/repo');

/** A sourceRef to the checkout. */
export const FROM_CHECKOUT = '{kind: GitRepository, name: flux-system, namespace: flux-system}';

/**
 * A Flux Kustomization `name` in `ns` building `path` (as given: quote it when it needs quoting) of
 * `sourceRef`, pruning; `extra` adds lines at the level of `spec:`'s fields (indented by the caller).
 */
export const ks = (ns: string, name: string, path: string, sourceRef = FROM_CHECKOUT, extra = '') =>
  `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 10m
  prune: true
  path: ${path}
  sourceRef: ${sourceRef}
${extra}`;

/** A ConfigMap `name` in `ns` whose data (a flow mapping's inside) is `data`. */
export const cm = (ns: string, name: string, data = 'a: b') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}}\ndata: {${data}}\n`;

/** The BASE tree: the checkout, and the Kustomization `ns`/app applying the ConfigMap app-settings. */
export const baseTree = (ns: string): Record<string, string> => ({
  'clusters/prod/flux-system.yaml': CHECKOUT,
  'clusters/prod/app.yaml': ks(ns, 'app', './apps/app'),
  'apps/app/cm.yaml': cm(ns, 'app-settings'),
});
