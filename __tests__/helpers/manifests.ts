// Manifests more than one test file applies.

/** The fields of kustomizationYaml's Kustomization. */
export interface KustomizationFields {
  /** metadata.name; `app` unless given. */
  name?: string;
  /** metadata.namespace; `flux-system` unless given (usually the test's fresh namespace). */
  namespace?: string;
  /** spec.path; `./<name>` unless given. */
  path?: string;
  /** spec.prune, a field Flux requires; false unless given. */
  prune?: boolean;
  /** spec.sourceRef's GitRepository name; `repo` unless given. */
  source?: string;
  /** More spec fields, as YAML lines at the level of `spec:` (indented here). */
  spec?: string;
}

/**
 * A Flux Kustomization file (kustomize.toolkit.fluxcd.io/v1) with the fields Flux requires
 * (interval, prune, path, sourceRef) and `spec`'s lines after them.
 */
export function kustomizationYaml(fields: KustomizationFields = {}): string {
  const { name = 'app', namespace = 'flux-system', path = `./${name}`, prune = false, source = 'repo' } = fields;
  const extra = (fields.spec ?? '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => `  ${line}\n`)
    .join('');
  return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  interval: 10m
  prune: ${prune}
  path: ${path}
  sourceRef: {kind: GitRepository, name: ${source}}
${extra}`;
}

/** A Deployment `name` in `ns` of one nginx replica, selected by the label app: `name`. */
export const deployment = (ns: string, name: string) => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
`;

/** A ConfigMap `name` in `ns` with the data {a: b}; `metadata` adds fields to its flow mapping (`, labels: {…}`). */
export const configMap = (ns: string, name: string, metadata = '') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: ${ns}${metadata}}\ndata: {a: b}\n`;

/**
 * A Job `migrate` in `ns` running `image`: its pod template is immutable, so changing the image
 * needs a recreate (with `force`, the annotation kustomize.toolkit.fluxcd.io/force: Enabled).
 */
export const migrateJob = (ns: string, image: string, force: boolean) => `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: ${ns}${force ? '\n  annotations: {kustomize.toolkit.fluxcd.io/force: Enabled}' : ''}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "${image}"}]
`;
