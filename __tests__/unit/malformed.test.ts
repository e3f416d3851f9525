// Finding 9 of issue #17: every malformed input ends, within its bound, in a result or a clear
// error: an Error (not a TypeError or RangeError: a crash), one that names the file or field it is
// about, has no stack trace and is of bounded length. The inputs come from a seeded generator, so
// every run sees the same ones; they run against the pure stages in-process.
import { describe, expect, it } from 'vitest';
import { loadKubeConfig } from '../../src/cluster/kubeconfig.js';
import { kustomizationFromText } from '../../src/kustomize/build.js';
import { mergeKustomization, referencedPaths } from '../../src/kustomize/merge.js';
import { parseManifests } from '../../src/objects/kube.js';
import { manifestTextProblem } from '../../src/objects/yaml.js';
import { decryptText } from '../../src/sops/decrypt.js';
import { parseKustomizations } from '../../src/flux/parse.js';
import { objectProblems, refusal } from '../../src/ssa/prevalidate.js';
import { mergeVariables, parseVarFlags, parseVarsInput } from '../../src/substitute/variables.js';
import { generateMalformed, type Family, type Malformed } from '../helpers/malformed.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const CASES = generateMalformed();
/** Longest error accepted: a few screens at most (one was 4.2 MB). */
const MAX_MESSAGE = 6000;

/** What each family's error must name, and the stage it runs through. */
const STAGES: Record<Family, { names: RegExp; run: (text: string) => unknown }> = {
  manifest: {
    // Metadata the server would refuse is named by object (the file is in the report's problems).
    names: /app\/all\.yaml|would be refused by the API server/,
    run: (text) => {
      const problem = manifestTextProblem(text, 'app/all.yaml');
      if (problem !== undefined) throw new Error(problem);
      const refused = refusal(objectProblems(parseManifests(text, 'app/all.yaml')));
      if (refused !== undefined) throw new Error(refused);
    },
  },
  flux: { names: /clusters\/app\.yaml/, run: (text) => parseKustomizations(text, 'clusters/app.yaml') },
  kustomization: {
    names: /app\/kustomization\.yaml/,
    run: (text) => {
      const k = kustomizationFromText(text, 'app/kustomization.yaml');
      return referencedPaths(mergeKustomization(k, { targetNamespace: 'x', namePrefix: 'p-' }).kustomization);
    },
  },
  sops: {
    // decryptText is given text, not a file: it names the document, key or field instead.
    names: /sops|document|decrypt|key|YAML|mac|ENC|data key/i,
    run: (text) => decryptText(text, 'yaml', { keyServices: [], verifyMac: true }),
  },
  kubeconfig: {
    names: /kubeconfig/,
    run: (text) => loadKubeConfig({ kind: 'content', content: text }),
  },
  vars: {
    names: /input "vars"|vars: /,
    run: (text) => mergeVariables([{ source: 'vars', vars: parseVarsInput(text, 'vars') }]),
  },
  'var-flags': {
    names: /--var /,
    run: (text) => mergeVariables([{ source: '--var', vars: parseVarFlags(JSON.parse(text) as string[]) }]),
  },
};

async function outcome(c: Malformed): Promise<{ ok: true } | { ok: false; error: unknown }> {
  try {
    await STAGES[c.family].run(c.text);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('malformed inputs end in a result or a clear error', () => {
  it('the generator makes at least 500 inputs, in every family', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(500);
    const families = new Set(CASES.map((c) => c.family));
    expect([...families].sort()).toEqual(Object.keys(STAGES).sort());
    expect(new Set(CASES.map((c) => `${c.family}: ${c.name}`)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [`${c.family}: ${c.name}`, c] as const))('%s', async (_, c) => {
    const result = await outcome(c);
    if (result.ok) return;
    const error = result.error;
    expect(error).toBeInstanceOf(Error);
    // A TypeError, RangeError or ReferenceError is a crash, not an answer.
    expect((error as Error).constructor.name).toMatch(
      /^(Error|UserError|SpecError|SopsError|YamlError|VariableError)$/,
    );
    const message = (error as Error).message;
    expect(message.length).toBeGreaterThan(10);
    expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE);
    expect(message).toMatch(STAGES[c.family].names);
    expect(message).not.toMatch(/\n\s+at .+:\d+:\d+|Maximum call stack|\[object Object\]|undefined$/);
  });
});
