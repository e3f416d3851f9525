// The bundled action's `::add-mask::` commands (issue 33, item 8): the kubeconfig input is registered
// by its credentials and whole, never line by line, so that the runner does not hide `apiVersion: v1`
// or `kind: Config` (every `kind: ConfigMap` then shows as `***Map`) in this step and every later
// step of the job; what the job summary says of a ConfigMap stays readable, and the credentials
// show nowhere.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { runAction, type ActionResult } from '../helpers/action.js';
import { adminClient, freshNamespace, kubeconfigPath, writeTree } from '../helpers/cluster.js';

const TOKEN = 'kr-masks-bearer-token-0123456789';
const PASSWORD = 'kr-masks-basic-password-42';

/** The values registered with the runner, as it reads them (the toolkit escapes %, CR and LF). */
function masks(res: ActionResult): string[] {
  return `${res.stdout}\n${res.stderr}`
    .split('\n')
    .filter((l) => l.startsWith('::add-mask::'))
    .map((l) => l.slice('::add-mask::'.length).replaceAll('%0D', '\r').replaceAll('%0A', '\n').replaceAll('%25', '%'));
}

/** Text as the runner shows it: every registered value replaced by `***`, longest first. */
function asShown(text: string, values: readonly string[]): string {
  let out = text;
  for (const v of [...values].sort((a, b) => b.length - a.length)) if (v !== '') out = out.split(v).join('***');
  return out;
}

describe('the kubeconfig input is masked by its credentials, not by its lines', () => {
  let client: ClusterClient;
  let kubeconfig: string;
  beforeAll(async () => {
    client = await adminClient();
    // The test cluster's kubeconfig (client certificate and key) and two users it does not use.
    kubeconfig = `${(await readFile(kubeconfigPath(), 'utf8')).trimEnd()}
- name: bot
  user:
    token: ${TOKEN}
- name: basic
  user:
    username: admin
    password: ${PASSWORD}
`;
  });
  afterAll(() => {
    client.close();
  });

  it.each([
    ['as YAML', (k: string) => k],
    ['base64-encoded', (k: string) => Buffer.from(k).toString('base64')],
  ])('given %s', async (_, encode) => {
    const ns = await freshNamespace(client);
    const workspace = await writeTree({
      'deploy/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: ${ns}\ndata:\n  note: "apiVersion: v1, kind: ConfigMap"\n`,
    });
    const res = await runAction(workspace, { kubeconfig: encode(kubeconfig), path: 'deploy', mode: 'apply' });
    expect(res.code, res.stdout + res.stderr).toBe(0);

    const registered = masks(res);
    const key = /client-key-data: (\S+)/.exec(kubeconfig)![1]!;
    for (const secret of [TOKEN, PASSWORD, key, kubeconfig.trim()]) expect(registered).toContain(secret);
    const credentials = [TOKEN, PASSWORD, ...[...kubeconfig.matchAll(/-data: (\S+)/g)].map((m) => m[1]!)];
    const structural = kubeconfig
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !credentials.some((c) => l.includes(c)));
    expect(structural).toEqual(expect.arrayContaining(['apiVersion: v1', 'kind: Config', '- name: admin']));
    const bare = new Set([...structural, ...structural.map((l) => l.replace(/^- /, ''))]);
    expect(registered.filter((m) => bare.has(m.trim()))).toEqual([]);
    expect(registered.filter((m) => m.length < 4)).toEqual([]);
    expect(registered).not.toContain('admin');

    // What the runner shows and the job summary say of the ConfigMap stays as written.
    const shown = asShown(res.stdout, registered);
    expect(shown).toContain(`ConfigMap/${ns}/settings created`);
    expect(asShown('apiVersion: v1\nkind: ConfigMap\n', registered)).toBe('apiVersion: v1\nkind: ConfigMap\n');
    expect(res.summary).toContain(`ConfigMap/${ns}/settings`);
    expect(res.summary).not.toMatch(/\*\*\*(Map|: v1)/);
    // And no credential shows.
    for (const c of credentials.filter((v) => v !== /certificate-authority-data: (\S+)/.exec(kubeconfig)?.[1])) {
      expect(shown).not.toContain(c);
      expect(res.summary).not.toContain(c);
    }
  });
});
