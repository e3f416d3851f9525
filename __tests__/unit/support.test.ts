import { describe, expect, it } from 'vitest';
import { specFromInputs } from '../../src/flux/from-inputs.js';
import { unsupportedFields } from '../../src/flux/support.js';
import type { KustomizationSpec } from '../../src/flux/types.js';

// Flux v1.9.6 stalls a Kustomization with spec.decryption.serviceAccountName unless the controller runs with
// the ObjectLevelWorkloadIdentity feature gate, which is off by default (kustomization_configuration_error_test.go).
describe('unsupportedFields: what Flux refuses by default', () => {
  const spec = (fields: Partial<KustomizationSpec>): KustomizationSpec => ({
    ...specFromInputs({ path: 'apps', name: 'apps', source: 'acme/fleet' }),
    origin: { kind: 'file', file: 'clusters/prod/apps.yaml', document: 1 },
    ...fields,
  });

  it.each<[Partial<KustomizationSpec>, string[]]>([
    [{ decryption: { provider: 'sops' } }, []],
    [{ decryption: { provider: 'sops', secretRef: { name: 'sops-keys' } } }, []],
    [
      { decryption: { provider: 'sops', serviceAccountName: 'kms-reader' } },
      [
        'spec.decryption.serviceAccountName: decryption with the credentials of a ServiceAccount (object ' +
          'identity, always on since Flux v1.10, for cloud KMS) is not supported here; remove it, and give ' +
          'the run the key or the cloud credentials itself (the sops-age-key input, or the KMS credentials of the job)',
      ],
    ],
  ])('%j', (fields, problems) => {
    expect(unsupportedFields(spec(fields), 'apply')).toEqual(problems);
  });
});
