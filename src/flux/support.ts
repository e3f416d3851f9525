import { OWNER_NAME_LABEL } from '../objects/flux.js';
import type { KustomizationSpec } from './types.js';

/**
 * Spec fields whose stage is not built yet. Each is refused with a clear message rather than
 * silently ignored, so that nobody believes, say, pruning happened when it did not. `build` only
 * cares about fields that change the built objects.
 */
export function unsupportedFields(spec: KustomizationSpec, command: 'build' | 'apply'): string[] {
  const out: string[] = [];
  if (command === 'build') return out;
  // The name is the value of the owner label on every object it applies (as in Flux).
  if (spec.name.length > 63) {
    out.push(
      `metadata.name is ${spec.name.length} characters: it becomes the value of the owner label ` +
        `${OWNER_NAME_LABEL} on every object, which allows at most 63; choose a shorter name`,
    );
  }
  if (spec.decryption?.serviceAccountName) {
    // Flux v1.10 retired the ObjectLevelWorkloadIdentity gate: it always uses the ServiceAccount's identity.
    out.push(
      'spec.decryption.serviceAccountName: decryption with the credentials of a ServiceAccount (object ' +
        'identity, always on since Flux v1.10, for cloud KMS) is not supported here; remove it, and give ' +
        'the run the key or the cloud credentials itself (the sops-age-key input, or the KMS credentials of the job)',
    );
  }
  return out;
}

/** `namespace/name` and where it was defined, for messages. */
export function describeSpec(spec: KustomizationSpec): string {
  const where = spec.origin.kind === 'file' ? `${spec.origin.file}, document ${spec.origin.document}` : 'action inputs';
  return `Kustomization ${spec.namespace}/${spec.name} (${where})`;
}

/**
 * The user a Kustomization acts as, as kustomize-controller does: its spec.serviceAccountName, else
 * the default-service-account input, in the Kustomization's namespace; undefined for neither.
 */
export function impersonatedUser(
  spec: { namespace: string; serviceAccountName?: string | undefined },
  settings: { defaultServiceAccount?: string | undefined },
): string | undefined {
  const sa = spec.serviceAccountName ?? settings.defaultServiceAccount;
  return sa ? `system:serviceaccount:${spec.namespace}:${sa}` : undefined;
}
