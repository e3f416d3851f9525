/**
 * One Kustomization rendered from its spec: kustomize with Flux's spec fields, SOPS decryption,
 * postBuild substitution and commonMetadata. The run asks for it through its build service
 * (builds.ts), which renders each spec once; the render phase (render.ts) turns it into the objects
 * as they are sent.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterClient } from '../cluster/client.js';
import { build, PathError, type BuildOptions, type BuildResult } from '../kustomize/build.js';
import type { BuildMemo } from '../kustomize/cache.js';
import { applyCommonMetadata } from '../kustomize/metadata.js';
import { objectKey, subjectOf, type KubeObject } from '../objects/kube.js';
import type { Settings } from '../options/settings.js';
import { describeSpec } from '../flux/support.js';
import type { KustomizationSpec } from '../flux/types.js';
import { decryptResources, refuseCiphertext } from '../sops/resources.js';
import { keyServices, readDecryptionSecret, type SecretKeys } from '../sops/keys.js';
import { dataKeysOnBase } from '../source/base-keys.js';
import { decryptSources } from '../sops/sources.js';
import type { DecryptOptions, KeyService } from '../sops/types.js';
import { substituteObjects } from '../substitute/objects.js';
import { readSubstituteFrom } from '../substitute/sources.js';
import { baseCommit, treeTrust } from '../source/guarded.js';
import { substituteScope, substituteVerdict } from '../source/trust.js';
import { asBuiltOnBase, refusedUse } from './secret-trust.js';
import { mergeVariables, secretNames, type VariableLayer } from '../substitute/variables.js';
import { collectSecretPaths, type SecretPaths } from '../substitute/provenance.js';
import { ObjectError, subjectOfError } from '../objects/errors.js';
import { reservedProblem } from '../inventory/reserved.js';
import { canaryDerived, markDerived, redactBuildError } from './canary-render.js';
import { StageError } from './errors.js';

/** Where a render sends the secret values it meets (to be masked) and its notes. */
export interface SpecHooks {
  secret: (value: string) => void;
  note: (line: string) => void;
}

/**
 * What a render gives: kustomize's result with the objects rendered, the fields written from secrets,
 * and the values of the substituteFrom ConfigMaps, which API errors do not quote either (as Flux v1.9.6+).
 */
export type RenderedSpec = BuildResult & { secretPaths: SecretPaths; substitutedFrom?: string[] };

/**
 * Renders one Kustomization the way kustomize-controller does: kustomize with Flux's spec fields,
 * then postBuild substitution, then commonMetadata. `client` reads substituteFrom; without one
 * (a `build` with no kubeconfig) those sources are skipped with a note, as `flux build --dry-run` does.
 */
export async function renderSpec(
  settings: Settings,
  spec: KustomizationSpec,
  client: ClusterClient | undefined,
  hooks: SpecHooks,
  /**
   * decrypt: SOPS decryption (without it, encrypted values are left as they are). memo: the run's
   * kustomize outputs (kustomize/cache.ts), so that the same input is built once a run.
   */
  { decrypt, memo }: { decrypt: boolean; memo?: BuildMemo },
): Promise<RenderedSpec> {
  // Every secret value seen while rendering, and by index the fields written from a secret source.
  const values = new Set<string>();
  const outer = hooks.secret;
  hooks = {
    ...hooks,
    secret: (v) => {
      values.add(v);
      outer(v);
    },
  };
  const decryption = decrypt ? await decryptOptions(settings, spec, client, hooks) : undefined;
  const buildOptions: BuildOptions = {
    root: settings.root,
    path: spec.path,
    ...(settings.run.artifact ? { artifact: true } : {}),
    kustomizeBin: settings.kustomizeBin,
    limits: settings.buildLimits,
    targetNamespace: spec.targetNamespace,
    namePrefix: spec.namePrefix,
    nameSuffix: spec.nameSuffix,
    patches: spec.patches,
    images: spec.images,
    components: spec.components,
    ignoreMissingComponents: spec.ignoreMissingComponents,
    buildMetadata: spec.buildMetadata,
    allowRemoteBases: settings.allowRemoteBases,
    ...(settings.buildCache !== undefined ? { cache: settings.buildCache } : {}),
    ...(memo ? { memo } : {}),
  };
  let decryptedFiles: string[] = [];
  const built = await buildNamed(spec, {
    ...buildOptions,
    ...(decryption
      ? {
          beforeBuild: async (copyRoot: string, kdir: string) => {
            const files = await decryptSources(copyRoot, kdir, decryption);
            if (files.length > 0)
              hooks.note(`Decrypted ${files.length} SOPS file(s) before the build: ${files.join(', ')}`);
            decryptedFiles = files;
            return files.length;
          },
        }
      : {}),
  }).catch(async (err: unknown) => {
    // kustomize's message may quote what a transformer made of a decrypted value (canary-render.ts).
    if (!decryption || decryptedFiles.length === 0) throw err;
    throw await redactBuildError(err, buildOptions, decryption, decryptedFiles, (o) => buildNamed(spec, o));
  });
  // What kustomize made of the decrypted files, found by building again with canaries (canary-render.ts).
  const derived =
    decryption && decryptedFiles.length > 0
      ? await canaryDerived(buildOptions, decryption, built, decryptedFiles, (o) => buildNamed(spec, o))
      : undefined;
  const origin = (obj: KubeObject) => built.origins.get(objectKey(obj));
  try {
    const byIndex: string[][] = [];
    const addPaths = (i: number, p: string[]) => (byIndex[i] ??= []).push(...p);
    if (derived) markDerived(derived, built, settings.untrustedTree !== undefined, addPaths, hooks.secret);
    const decrypted = decryption
      ? await decryptResources(built.objects, {
          ...decryption,
          originOf: origin,
          sourceOf: async (obj) => {
            const file = origin(obj);
            return file === undefined ? undefined : readFile(join(settings.root, file), 'utf8').catch(() => undefined);
          },
          note: hooks.note,
          onSecretPaths: addPaths,
        })
      : built.objects;
    if (decrypt) refuseCiphertext(decrypted, origin);
    const fromConfigMaps: string[] = [];
    const objects = applyCommonMetadata(
      await substitute(settings, spec, decrypted, client, hooks, addPaths, fromConfigMaps),
      spec.commonMetadata,
    );
    refuseReserved(objects, (i) => built.objects[i] && origin(built.objects[i]));
    const secretPaths = collectSecretPaths(objects, byIndex, values);
    return {
      ...built,
      objects,
      secretPaths,
      ...(fromConfigMaps.length > 0 ? { substitutedFrom: fromConfigMaps } : {}),
    };
  } catch (err) {
    // An error about one object points at the file it came from (a check-run annotation).
    const subject = subjectOfError(err);
    const found = subject === undefined ? undefined : built.objects.find((o) => subjectOf(o) === subject);
    // A build that did not name its objects' files is traced now (build.ts traceOrigins).
    const file =
      found &&
      (origin(found) ??
        (await built.traceOrigins?.().then(
          (all) => all.get(objectKey(found)),
          () => undefined,
        )));
    if (file === undefined) throw err;
    // Say where the object comes from in the message too, not only in the annotation.
    const placed = err instanceof ObjectError && err.file === undefined ? err.at(file) : err;
    throw StageError.of('render', placed, { file });
  }
}

/**
 * No build may contain an object of this tool's own state (an inventory, a lock: see
 * inventory/reserved.ts), judged on the objects as they would be sent. Thrown as an error about the
 * object and its file (substitution and commonMetadata keep the objects' order, and may have renamed one).
 */
function refuseReserved(objects: readonly KubeObject[], fileOf: (index: number) => string | undefined): void {
  objects.forEach((obj, i) => {
    const problem = reservedProblem(obj);
    if (problem === undefined) return;
    const file = fileOf(i);
    const where = file === undefined ? {} : { file };
    throw StageError.of('render', new ObjectError(subjectOf(obj), `${problem}; nothing was applied`, where), where);
  });
}

/**
 * SOPS decryption runs when the spec asks for it (spec.decryption) or the run was given keys. Keys
 * come from the decryption Secret in the cluster, the run's inputs, and the runner's ambient cloud
 * credentials.
 */
async function decryptOptions(
  settings: Settings,
  spec: KustomizationSpec,
  client: ClusterClient | undefined,
  hooks: SpecHooks,
): Promise<DecryptOptions | undefined> {
  const inputKeys = {
    ...(settings.sopsAgeKey ? { age: settings.sopsAgeKey } : {}),
    ...(settings.sopsPgpKey ? { pgp: settings.sopsPgpKey } : {}),
    vaultAddresses: settings.sopsVaultAddresses,
  };
  if (!spec.decryption && !inputKeys.age && !inputKeys.pgp) return undefined;
  // The platform's keys (the Secret, the inputs, the runner's cloud credentials) open the
  // repository's SOPS files: an untrusted tree gets them only as the base decrypts (secret-uses.ts).
  // Refused: the only key service opens nothing (no Secret, no input key, no ambient cloud
  // credentials), so that a SOPS file fails as one no key opens, naming the file, beside the note;
  // the note is made when a SOPS file asks for a key, so that a Kustomization with none says nothing.
  const refused = await refusedUse(settings, spec, { use: 'decryption', decryption: spec.decryption });
  if (refused !== undefined) {
    let said = false;
    const refusal: KeyService & { describeMiss: () => string } = {
      name: 'decryption refused',
      describeMiss: () =>
        'decryption refused: in this run the base commit gives this Kustomization no key (see its note)',
      canOpen: () => true,
      decrypt: () => {
        if (!said) hooks.note(refused);
        said = true;
        return Promise.resolve(undefined);
      },
    };
    return { keyServices: [refusal], verifyMac: settings.sopsVerifyMac, onSecret: hooks.secret };
  }
  let fromSecret: SecretKeys | undefined;
  if (spec.decryption?.secretRef) {
    if (client) fromSecret = await readDecryptionSecret(client, spec, hooks.secret);
    else
      hooks.note(
        `${describeSpec(spec)}: spec.decryption.secretRef skipped: no cluster to read it from (give --kubeconfig)`,
      );
  }
  return {
    keyServices: keyServices(inputKeys, fromSecret, settings.env),
    verifyMac: settings.sopsVerifyMac,
    onSecret: hooks.secret,
    // In an untrusted run, a file whose data keys are not all on the base is opened into stand-ins (walk.ts).
    ...(settings.untrustedTree ? { dataKeyOnBase: dataKeysOnBaseOf(settings.untrustedTree) } : {}),
  };
}

/**
 * postBuild substitution with Flux's sources and precedence, plus the action's own inputs at the
 * bottom: vars/secret-vars < substituteFrom (in order) < postBuild.substitute. It runs when the spec
 * has postBuild, or, for the single Kustomization of the inputs, when variables were given.
 */
async function substitute(
  settings: Settings,
  spec: KustomizationSpec,
  objects: KubeObject[],
  client: ClusterClient | undefined,
  hooks: SpecHooks,
  onSecretPaths: (index: number, paths: string[]) => void,
  /** Gets the values of the substituteFrom ConfigMaps (as substituted: without newlines). */
  fromConfigMaps: string[] = [],
): Promise<KubeObject[]> {
  Object.values(settings.secretVars).forEach(hooks.secret);
  const inputVars = Object.keys(settings.vars).length + Object.keys(settings.secretVars).length > 0;
  if (!spec.postBuild && !(spec.origin.kind === 'inputs' && inputVars)) return objects;
  // secret-vars go to every Kustomization that substitutes: in an untrusted tree, only to those the
  // base commit has with spec.postBuild (secret-uses.ts); the others substitute without them.
  const refused =
    Object.keys(settings.secretVars).length > 0 ? await refusedUse(settings, spec, { use: 'secretVars' }) : undefined;
  if (refused !== undefined) hooks.note(refused);
  const inputLayers: VariableLayer[] = [
    { source: 'input "vars"', vars: settings.vars },
    { source: 'input "secret-vars"', vars: refused === undefined ? settings.secretVars : {}, secret: true },
  ];
  let fromCluster: VariableLayer[] = [];
  if (spec.postBuild?.substituteFrom.length) {
    if (client) {
      await refuseUntrustedSecrets(settings, spec);
      fromCluster = await readSubstituteFrom(client, spec, hooks.secret);
      for (const layer of fromCluster.filter((l) => !l.secret))
        fromConfigMaps.push(...Object.values(layer.vars).map((v) => v.replaceAll('\n', '')));
    } else {
      hooks.note(
        `${describeSpec(spec)}: spec.postBuild.substituteFrom skipped: no cluster to read it from (give --kubeconfig)`,
      );
    }
  }
  const layers = [
    ...inputLayers,
    ...fromCluster,
    { source: `${describeSpec(spec)}: spec.postBuild.substitute`, vars: spec.postBuild?.substitute ?? {} },
  ];
  return substituteObjects(objects, mergeVariables(layers), {
    strict: settings.strictSubstitute,
    strategy: spec.postBuild?.substituteStrategy ?? 'WithVariables',
    secretNames: secretNames(layers),
    // An untrusted tree may not turn a secret into names or keys, which no mask covers.
    ...(settings.untrustedTree ? { secretsOnlyInValues: true } : {}),
    onSecretPaths,
    onSecret: hooks.secret,
  });
}

/**
 * In an untrusted tree (source/trust.ts), a Secret of postBuild.substituteFrom is read only when the
 * base commit's Kustomization of the same name reads it too; otherwise the render fails, saying why.
 */
async function refuseUntrustedSecrets(settings: Settings, spec: KustomizationSpec): Promise<void> {
  if (settings.untrustedTree === undefined) return;
  const secrets = (spec.postBuild?.substituteFrom ?? [])
    .map((ref, i) => ({ ref, i }))
    .filter(({ ref }) => ref.kind === 'Secret');
  if (secrets.length === 0) return;
  const trust = await treeTrust(settings)();
  for (const { ref, i } of secrets) {
    const verdict = await asBuiltOnBase(
      substituteVerdict(spec.namespace, spec.name, ref.name, trust),
      substituteScope(spec.namespace, spec.name, ref.name),
      trust,
    );
    if (!verdict.use) {
      throw new Error(
        `spec.postBuild.substituteFrom[${i}]: Secret ${spec.namespace}/${ref.name} is not read: ${verdict.why}`,
      );
    }
  }
}

/**
 * build(), with a spec.path that cannot be built named as the field it is, with the file (and
 * document) of the Kustomization that sets it, or as the `path` input.
 */
async function buildNamed(spec: KustomizationSpec, opts: BuildOptions): Promise<BuildResult> {
  try {
    return await build(opts);
  } catch (err) {
    if (!(err instanceof PathError)) throw err;
    const where = spec.origin.kind === 'file' ? `spec.path` : 'the path input';
    const file = spec.origin.kind === 'file' ? ` (${spec.origin.file}, document ${spec.origin.document})` : '';
    throw new Error(`${where} "${err.path}"${file} ${err.problem}`, { cause: err });
  }
}

/** One dataKeyOnBase per run (every Kustomization's settings share `untrustedTree`): each key line is searched once. */
const keysOnBase = new WeakMap<object, (encs: readonly string[]) => Promise<boolean>>();

function dataKeysOnBaseOf(
  untrusted: NonNullable<Settings['untrustedTree']>,
): (encs: readonly string[]) => Promise<boolean> {
  let found = keysOnBase.get(untrusted);
  if (found === undefined) {
    // The base commit is one of the default branch (guarded.ts), or none known.
    found = dataKeysOnBase(untrusted.root, async () => {
      const base = await baseCommit(untrusted);
      return 'commit' in base ? base.commit : undefined;
    });
    keysOnBase.set(untrusted, found);
  }
  return found;
}
