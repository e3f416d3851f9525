// Manifests more than one test file applies.

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
