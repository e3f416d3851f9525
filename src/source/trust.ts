/**
 * The trust rule for the credentials a source is fetched with (pure). In a run whose tree is
 * untrusted (a preview, or any run on a pull_request event), the tree could point a source with
 * credentials at a host of its choosing, or name a Secret it may not read. So a credential — a
 * cluster Secret the source names, git-credentials, registry-credentials, github-token, the
 * environment's cloud credentials — is used for a source only when its definition, in every field
 * that decides where a credential goes or which Secret is read (kind, namespace, name, URL or
 * endpoint and bucket, provider, insecure, region, secretRef), is the same as a definition on the
 * base commit. When the run cannot read the base (a shallow checkout, no base given), no source
 * gets credentials. In a trusted run (after review: apply on a push, drift on a schedule) the tree
 * is the reviewed one. Either way a secretRef names a Secret in the source object's own namespace,
 * as source-controller reads it.
 */
import type { BucketDef, GitRepositoryDef, OCIRepositoryDef } from '../flux/source-defs.js';
import { eventTrust, type BaseChoice } from './event-trust.js';

export type FetchedDef = ({ kind: 'GitRepository' } & GitRepositoryDef) | OCIRepositoryDef | BucketDef;

/** How far this run trusts its tree. */
export type TreeTrust =
  | { trusted: true }
  | {
      trusted: false;
      /** Why the tree is not trusted, for the notes (`a preview of a pull request`). */
      reason: string;
      /** The scopes (credentialScope) of the source definitions on the base commit, or why there are none. */
      base: ReadonlySet<string> | { problem: string };
      /**
       * The use scopes (secret-uses.ts) of the base commit's Kustomizations as their parents' builds on
       * that commit make them (a namespace, a substituteFrom a parent gives a child), worked out once, when
       * a scope of the files as written is missing; absent when no run registered how (guarded.ts).
       */
      asBuilt?: () => Promise<ReadonlySet<string>>;
    };

/** The fields of a definition that decide where its credentials go, as one comparable text. */
export function credentialScope(def: FetchedDef): string {
  const common = { kind: def.kind, namespace: def.namespace, name: def.name, secretRef: def.secretRef ?? null };
  switch (def.kind) {
    case 'GitRepository':
      return JSON.stringify({ ...common, url: def.url });
    case 'OCIRepository':
      return JSON.stringify({
        ...common,
        url: def.url,
        provider: def.provider ?? 'generic',
        insecure: def.insecure === true,
      });
    case 'Bucket':
      return JSON.stringify({
        ...common,
        endpoint: def.endpoint,
        bucketName: def.bucketName,
        provider: def.provider,
        insecure: def.insecure === true,
        region: def.region ?? null,
      });
  }
}

/** A Kustomization reading a Secret through postBuild.substituteFrom, as one comparable text. */
export function substituteScope(namespace: string, name: string, secret: string): string {
  return JSON.stringify({ kind: 'Kustomization', namespace, name, substituteFromSecret: secret });
}

/**
 * Whether Kustomization `namespace/name` may read Secret `secret` (of its own namespace) for
 * postBuild.substituteFrom in a run of `trust`: in an untrusted tree, only when the base commit's
 * Kustomization of that name reads it too, so that a pull request cannot make a preview read a
 * Secret the reviewed configuration never gave that Kustomization.
 */
export function substituteVerdict(
  namespace: string,
  name: string,
  secret: string,
  trust: TreeTrust,
): CredentialVerdict {
  return verdict(
    substituteScope(namespace, name, secret),
    trust,
    `the base commit's Kustomization ${namespace}/${name} does not read it: Secrets are read only for the Kustomizations the base branch gives them to`,
  );
}

export type CredentialVerdict = { use: true } | { use: false; why: string };

/** Whether `def` may be fetched with credentials in a run of `trust`, and why not. */
export function credentialVerdict(def: FetchedDef, trust: TreeTrust): CredentialVerdict {
  return verdict(
    credentialScope(def),
    trust,
    'its definition (URL or endpoint, provider, secretRef or namespace) is not the same on the base commit: credentials are used only for sources the base branch defines',
  );
}

/** The one rule: a trusted tree, or a scope the base commit has; else why not (`notOnBase` when the base lacks it). */
export function verdict(scope: string, trust: TreeTrust, notOnBase: string): CredentialVerdict {
  if (trust.trusted) return { use: true };
  if (!(trust.base instanceof Set)) {
    return { use: false, why: `${trust.reason}, and ${(trust.base as { problem: string }).problem}` };
  }
  if (trust.base.has(scope)) return { use: true };
  return { use: false, why: `${trust.reason}, and ${notOnBase}` };
}

/** `GitRepository flux-system/apps`: a source definition as messages and notes name it. */
export function sourceName(def: FetchedDef): string {
  return `${def.kind} ${def.namespace}/${def.name}`;
}

/**
 * Whether a run's tree is untrusted, why, and how its base commit is found: the action's previews
 * (mode: preview, whatever the event) and any run on an event whose tree is not trusted
 * (event-trust.ts; unknown events included); the base is the input (or flag) base as given, else
 * the event's (a pull request's base commit on the default branch, else a merge-base with the
 * default branch: `onBranch`). Undefined: the tree is trusted (an apply on a push, a scheduled drift
 * check, the CLI on a workstation, where there is no event).
 */
export function untrustedTreeOf(run: {
  /** The action's mode; the CLI passes none (a preview on a workstation is the user's own tree). */
  mode?: string;
  eventName?: string;
  event?: unknown;
  base?: string;
  /** The checkout (a git work tree), where the base commit is read. */
  root: string;
}): { reason: string; base?: string; onBranch?: string; root: string } | undefined {
  const row = run.eventName === undefined ? undefined : eventTrust(run.eventName, run.event);
  const byEvent = row !== undefined && !row.trusted;
  if (!byEvent && run.mode !== 'preview') return undefined;
  const choice: BaseChoice = run.base !== undefined ? { commit: run.base } : (row?.base ?? {});
  const reason = byEvent
    ? `this run is for a ${run.eventName} event, whose tree is not trusted`
    : 'this run is a preview, whose tree is not trusted';
  return {
    reason,
    ...(choice.commit !== undefined ? { base: choice.commit } : {}),
    ...(choice.onBranch !== undefined ? { onBranch: choice.onBranch } : {}),
    root: run.root,
  };
}
