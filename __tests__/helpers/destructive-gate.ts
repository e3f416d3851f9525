// What the destructive gate's tests share (the integration tests and the hostile-PR suite's attacks
// 37a/37b): the label, the action's inputs for an apply with the gate on, and the objects it guards.

export const LABEL = 'destructive-ok';

/**
 * The action's inputs for an apply of ks.yaml with the gate on, reporting nothing to GitHub;
 * `kubeconfig` is a path or the file's content, as the input takes either.
 */
export const gateInputs = (kubeconfig: string) => ({
  kubeconfig,
  kustomizations: 'ks.yaml',
  mode: 'apply',
  'github-token': 'tok-rw',
  'destructive-approval-label': LABEL,
  comment: 'false',
  'check-run': 'false',
});

/** The Service web of `ns` at cluster IP `ip`; `annotations` continues its metadata flow mapping. */
export const service = (ns: string, ip: string, annotations = '') =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: ${ns}${annotations}}\n` +
  `spec: {clusterIP: ${ip}, selector: {app: web}, ports: [{port: 80}]}\n`;

/** A PersistentVolumeClaim `name` of `ns`. */
export const pvc = (ns: string, name = 'data') =>
  `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ${name}, namespace: ${ns}}\n` +
  'spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n';
