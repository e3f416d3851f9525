// Secret values the API server prints unquoted in its type-conversion errors (issue 51; Flux v1.9.6
// redacts decrypted values from them), through the bundled action in preview on a pull_request event
// against the test cluster. Each case writes reports/attack/<case>.json for scripts/attack-summary.mjs;
// a case fails when its attack got through.
//
// A pull request cannot read a substituteFrom Secret, but it can place `${SECRET:i:n}` where the
// value's type is wrong: a list, a map, or a list element's key. The server's structured-merge-diff
// then refuses the object with Go's %v of the value, unquoted (`.spec.ports: expected list, got
// &{qx}`), where no quote-hiding looks and no mask takes 1 or 2 characters. The rule the cases
// expect: in an untrusted run, an error about an object holding secret-derived values shows the
// field and the reason, never such a value (src/ssa/error-redaction.ts).
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import { freshNamespace } from '../helpers/cluster.js';
import { CHECKOUT, cm, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  cleanupRun,
  evidenceOf,
  previewFixture,
  publishedChannels,
  putSecret,
  runHostile,
  type Files,
  type HostileRun,
} from '../helpers/hostile.js';

/** Letters English and the action's words rarely put together: a slice found is the slice. */
function rareSecret(n = 12): string {
  const letters = 'qxzjvkw';
  return Array.from(randomBytes(n), (b) => letters[b % letters.length]).join('');
}

/** The base: the checkout and Kustomization app of `ns` substituting from the Secret app-vars. */
const base = (ns: string): Files => ({
  'clusters/prod/flux-system.yaml': CHECKOUT,
  'clusters/prod/app.yaml': ks(
    ns,
    'app',
    './apps/app',
    undefined,
    '  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: app-vars}\n',
  ),
  'apps/app/cm.yaml': cm(ns, 'app-settings'),
});

interface Slice {
  start: number;
  length: number;
}

interface Case {
  id: string;
  title: string;
  head: (ns: string) => Files;
  /** The slices of the secret the head places, and the field names the server's errors must name. */
  slices: Slice[];
  fields: string[];
}

const svc = (ns: string, name: string, spec: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${ns}}\nspec:\n${spec}`;

const CASES: Case[] = [
  {
    id: '51-2a-secret-slices-in-type-conversion-errors',
    title:
      'a substituteFrom Secret sliced 1 and 2 characters at a time where a list or a map belongs (Service ports and selector, ConfigMap data): the server prints each slice unquoted, `got &{qx}`',
    head: (ns) => ({
      'apps/app/bad.yaml': [
        svc(ns, 'a', '  ports: "${SECRET:0:2}"\n'),
        svc(ns, 'b', '  selector: "${SECRET:2:2}"\n  ports: [{port: 80}]\n'),
        svc(ns, 'c', '  ports: "${SECRET:4:1}"\n'),
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: ${ns}}\ndata: "\${SECRET:5:2}"\n`,
      ].join('---\n'),
    }),
    slices: [
      { start: 0, length: 2 },
      { start: 2, length: 2 },
      { start: 4, length: 1 },
      { start: 5, length: 2 },
    ],
    fields: ['.spec.ports: expected list', '.spec.selector: expected map', '.data: expected map'],
  },
  {
    id: '51-2b-secret-slices-as-list-keys-and-in-a-go-list',
    title:
      "a substituteFrom Secret sliced into a list element's key (a port name beside a port of the wrong type: the path names the element by its keys) and into a one-element list where a string belongs (Go prints the list)",
    head: (ns) => ({
      'apps/app/bad.yaml': [
        svc(ns, 'e', '  ports: [{port: "${SECRET:7:2}", protocol: "${SECRET:9:2}"}]\n'),
        svc(ns, 'f', '  ports: [{port: 80, name: ["${SECRET:10:2}"]}]\n'),
      ].join('---\n'),
    }),
    slices: [
      { start: 7, length: 2 },
      { start: 9, length: 2 },
      { start: 10, length: 2 },
    ],
    fields: ['expected string'],
  },
];

/** The forms a slice takes where the server prints a value: `&{s}`, `{Value:s}`, `"s"`, `=s,` or `=s]`. */
function sliceEvidence(run: HostileRun, secret: string, slices: readonly Slice[]): string[] {
  const out: string[] = [];
  for (const { start, length } of slices) {
    const s = secret.slice(start, start + length);
    const forms = [`&{${s}}`, `{Value:${s}}`, `"${s}"`, `\\"${s}\\"`, `=${s},`, `=${s}]`];
    for (const [what, text] of publishedChannels(run)) {
      for (const f of forms) {
        const at = text.indexOf(f);
        if (at >= 0)
          out.push(
            `slice ${JSON.stringify(s)} as ${f} in ${what}: ${JSON.stringify(text.slice(Math.max(0, at - 100), at + 30))}`,
          );
      }
    }
  }
  return out;
}

/** Evidence that the server did not refuse the objects as the attack needs (without it, nothing was tried). */
function refused(run: HostileRun, fields: readonly string[]): string[] {
  const said = publishedChannels(run)
    .map(([, t]) => t)
    .join('\n');
  const out: string[] = [];
  if (run.code !== 2) out.push(`the preview did not fail (exit ${run.code}): the server refused nothing`);
  for (const f of fields) if (!said.includes(f)) out.push(`no error says ${JSON.stringify(f)}`);
  return out;
}

describe.concurrent('secret values in type-conversion errors (preview on a pull_request event)', () => {
  const fixture = previewFixture();

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    const { client, github, kubeconfig, githubToken } = fixture;
    let run: HostileRun | undefined;
    let ns: string | undefined;
    await attackCase(
      c,
      async (evidence, result) => {
        ns = await freshNamespace(client, 'atk');
        const secret = rareSecret();
        await putSecret(client, ns, 'app-vars', { SECRET: secret });
        run = await runHostile({
          client,
          github,
          number: 5100 + index,
          base: base(ns),
          head: c.head(ns),
          inputs: {
            kubeconfig,
            mode: 'preview',
            kustomizations: 'clusters/prod/*.yaml',
            'github-token': githubToken,
          },
          timeoutMs: 120_000,
        });
        Object.assign(result, {
          exitCode: run.code,
          runMs: run.ms,
          log: `${run.stdout}\n${run.stderr}`.split('\n').slice(-60).join('\n'),
        });
        evidence.push(
          ...evidenceOf({
            run,
            canaries: [{ where: 'the Secret app-vars SECRET', value: secret }],
            listeners: [],
            namespace: ns,
          }),
          ...refused(run, c.fields),
          ...sliceEvidence(run, secret, c.slices),
        );
      },
      async () => {
        if (run) await cleanupRun(run);
        if (ns) await client.request('DELETE', `/api/v1/namespaces/${ns}`).catch(() => undefined);
      },
    );
  });
});
