// What a run masks of a kubeconfig it connects with (the action's, or a spec.kubeConfig Secret's):
// every credential value, the exec plugin's environment included, and no structural value.
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubeconfigSecrets } from '../../src/cluster/kubeconfig.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const doc = (user: string) => `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
users:
- name: u
  user:
${user}`;

describe('kubeconfigSecrets', () => {
  it.each([
    ['a token', '    token: tok-0123456789abcdef\n', ['tok-0123456789abcdef']],
    [
      'a basic login (the password, not the user name)',
      '    username: admin\n    password: pw-0123456789\n',
      ['pw-0123456789'],
    ],
    [
      "an exec plugin's environment",
      '    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n      env:\n      - {name: AWS_SECRET_ACCESS_KEY, value: wJalrXUtnFEMI-K7MDENG}\n      - {name: AWS_REGION, value: eu}\n',
      ['wJalrXUtnFEMI-K7MDENG'],
    ],
    [
      "an auth provider's tokens",
      '    auth-provider:\n      name: oidc\n      config: {id-token: idt-0123456789, refresh-token: rft-0123456789, client-id: kubectl}\n',
      ['idt-0123456789', 'rft-0123456789'],
    ],
  ])('masks %s', (_, user, secrets) => {
    const kc = new KubeConfig();
    kc.loadFromString(doc(user));
    const masked = kubeconfigSecrets(kc);
    expect(masked.sort()).toEqual([...secrets].sort());
    for (const structural of ['v1', 'Config', 'admin', 'kubectl', 'eu', 'AWS_SECRET_ACCESS_KEY', 'ctx'])
      expect(masked).not.toContain(structural);
  });

  it("masks a token-file's token (client-node reads it into the user)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kr-tokenfile-'));
    await writeFile(join(dir, 'token'), 'file-token-0123456789');
    const kc = new KubeConfig();
    kc.loadFromString(doc(`    token-file: ${join(dir, 'token')}\n`));
    expect(kubeconfigSecrets(kc)).toEqual(['file-token-0123456789']);
  });
});
