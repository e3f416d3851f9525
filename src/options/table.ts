/**
 * The option table: every action input and CLI flag, declared once. The action's settings reader
 * (read.ts), the CLI's flag parser and usage text (flags.ts, usage.ts) and the README's inputs and
 * flags tables (scripts/readme-tables.mjs) are generated from it; a test fails when action.yml
 * says otherwise. Pure data: no runtime imports (scripts/readme-tables.mjs loads it with Node).
 *
 * Inputs are in action.yml's order; the flags the CLI alone has follow.
 */
import type { Option } from './types.js';

export type { Flag, Kind, Option, SecretForm } from './types.js';

/** The action's inputs, each with its CLI flag (or the reason it has none). */
const DECLARED = [
  {
    input: 'mode',
    field: 'mode',
    kind: 'enum',
    values: ['apply', 'preview', 'drift', 'plan', 'report'],
    default: 'apply',
    description:
      'apply: change the cluster. preview: server-side dry-run only; report what would change (on a pull request, also as a sticky comment). drift: dry-run and fail when the cluster differs from Git (with drift-correction, apply instead). plan: no cluster; read the Kustomization files and write the outputs matrix, levels and affected for a fan-out over jobs. report: no cluster; merge the report-file of several jobs (reports) into one PR comment and check run.',
    noFlag: 'the command sets it: apply, diff (preview), drift, plan or report',
  },
  {
    input: 'kubeconfig',
    field: 'kubeconfig',
    kind: 'multiline',
    parse: 'located',
    secret: 'lines',
    description:
      "The kubeconfig's content (for example a secret; masked at once) or a path to it, relative to the workspace. Empty: $KUBECONFIG or ~/.kube/config.",
    flag: {
      name: 'kubeconfig',
      arg: 'FILE',
      value: 'path',
      help: 'kubeconfig file',
      defaultText: '$KUBECONFIG or ~/.kube/config',
    },
  },
  {
    input: 'context',
    field: 'context',
    kind: 'string',
    description: "kubeconfig context to use. Empty: the file's current context.",
    flag: { arg: 'NAME', help: 'kubeconfig context', defaultText: "the file's current context" },
  },
  {
    input: 'path',
    field: 'path',
    kind: 'string',
    default: '.',
    description:
      'Directory to reconcile, relative to the workspace (it may not leave it): a kustomize directory, or plain YAML (a kustomization is generated over it).',
    flag: { arg: 'DIR', help: 'directory to build, relative to --root' },
  },
  {
    input: 'name',
    field: 'name',
    kind: 'string',
    description:
      "The Kustomization's name for path (its inventory, lock and owner labels are named after it; namespace flux-system). Default: derived from the repository and the whole path, e.g. app1-deploy-<hash>, so that two folders or repositories never share one. Set it to keep a stable name when the folder moves; a name already recorded by another repository is refused.",
    flag: {
      arg: 'NAME',
      help: "the Kustomization's name for --path: its inventory, lock and owner labels",
      defaultText: 'derived from the repository (git remote, else the root) and the path',
    },
  },
  {
    input: 'source',
    field: 'source',
    kind: 'string',
    parse: 'checkout-source',
    description:
      "The source that is this checkout, as [KIND/]NAMESPACE/NAME: a GitRepository (the default kind, e.g. flux-system/flux-system), or OCIRepository/NAMESPACE/NAME, Bucket/NAMESPACE/NAME or ExternalArtifact/NAMESPACE/NAME for a fleet synced from an artifact of this repository (e.g. OCIRepository/flux-system/flux-system, the FluxInstance's sync in Flux's D2 layout); Kustomizations whose spec.sourceRef is that source are built from this checkout. A Kustomization whose spec.sourceRef is another GitRepository defined in the repository is built from that repository, fetched with git (see git-credentials); an OCIRepository or a Bucket defined in the repository is pulled from its registry or store; an ExternalArtifact is made here by the ArtifactGenerator in the repository that lists it, from its sources. A source that cannot be had fails the Kustomization (its dependents are skipped), and it is never built from this repository instead. Default: GitRepositories defined in the repository are matched by URL and branch against this checkout; one not defined anywhere is taken to be the checkout, with a note.",
    flag: {
      arg: '[KIND/]NS/NAME',
      help: 'the source that is this checkout (a GitRepository, or OCIRepository/NS/NAME, Bucket/NS/NAME, ExternalArtifact/NS/NAME); other sources are fetched or made',
      defaultText: 'GitRepositories in the repository are matched by URL',
    },
  },
  {
    input: 'git-credentials',
    field: 'gitCredentials',
    kind: 'map',
    parse: 'hosts',
    secret: 'values',
    description:
      "Tokens for fetching the GitRepositories that Kustomizations name as their source when they are not this checkout (another repository, or this one at another branch, tag or commit), as a map of host to token (e.g. `github.com:` followed by a token from your secrets). Sent to that host only, as HTTP basic auth (user x-access-token) through git's environment, and masked. Without one, the Secret the GitRepository's spec.secretRef names is read (username and password, or bearerToken) when the action may read it; else the repository is fetched anonymously. In a preview, or any run on a pull request, no credential is used for a source whose definition (URL, secretRef, namespace) differs from the base commit's: see SECURITY.md.",
    flag: {
      name: 'git-credential',
      arg: 'HOST=TOKEN',
      multiple: true,
      value: 'pairs',
      help: 'a token for fetching other GitRepositories from HOST (masked in the output)',
    },
  },
  {
    input: 'allow-private-source-hosts',
    field: 'allowPrivateSourceHosts',
    kind: 'boolean',
    default: 'false',
    description:
      'Let GitRepository, OCIRepository and Bucket sources point at this machine or beside it: loopback (127.0.0.0/8, ::1, localhost), link-local (169.254.0.0/16, fe80::/10), the unspecified address and the cloud metadata services (169.254.169.254, metadata.google.internal). Off by default, so a tree cannot make the runner fetch from (or send a credential to) its own services. Private networks (10.0.0.0/8, 192.168.0.0/16, …) are allowed either way.',
    flag: { help: 'let sources point at loopback, link-local and metadata addresses' },
  },
  {
    input: 'registry-credentials',
    field: 'registryCredentials',
    kind: 'map',
    parse: 'logins',
    secret: 'values',
    description:
      "Logins for pulling the OCIRepositories that Kustomizations (or ArtifactGenerators) name as their source, as a map of registry host to `USERNAME:PASSWORD` (for a token, any user name: `token:` followed by it). Sent to that registry only (basic auth, or exchanged for a bearer token as the registry asks), and masked. Without one, the kubernetes.io/dockerconfigjson Secret the OCIRepository's spec.secretRef names is read when the action may read it; for ghcr.io, github-token is used; else the pull is anonymous. In a preview, or any run on a pull request, no credential is used for a source whose definition (URL, provider, secretRef, namespace) differs from the base commit's: see SECURITY.md.",
    flag: {
      name: 'registry-credential',
      arg: 'HOST=USER:PASSWORD',
      multiple: true,
      value: 'pairs',
      help: 'a login for pulling OCIRepositories from registry HOST (masked in the output)',
    },
  },
  {
    input: 'field-manager',
    field: 'fieldManager',
    kind: 'string',
    check: { maxLength: 128 },
    default: 'kustomize-controller',
    description:
      "Server-side apply field manager. The default is Flux's, so objects can move between Flux and this action without ownership conflicts.",
    flag: { arg: 'NAME', help: 'server-side apply field manager' },
  },
  {
    input: 'kustomizations',
    field: 'kustomizations',
    kind: 'list',
    description:
      "Flux Kustomization files (kustomize.toolkit.fluxcd.io/v1) or globs, relative to the workspace, one per line or comma-separated; each names its own spec.path. Replaces path. Several are reconciled in dependsOn order; one whose dependency failed is skipped, with the reason. A file named alone whose Kustomization builds its own file (Flux's entry point: flux bootstrap's clusters/NAME/flux-system/gotk-sync.yaml) brings every Kustomization file it and its children apply. A file only a glob matched that no Kustomization applies and that leaves fields to a parent is left out with a note.",
    flag: {
      arg: 'GLOB',
      multiple: true,
      help: 'Flux Kustomization files or globs (repeatable, or comma-separated); build prints every Kustomization found, apply, diff and drift reconcile all of them in dependsOn order',
    },
  },
  {
    input: 'exclude',
    field: 'exclude',
    kind: 'list',
    description:
      'Globs of Kustomization files to leave out (relative to the workspace, one per line or comma-separated): never loaded, whatever kustomizations matches or an entry point reaches, and not followed. A file left out whose inventory is in the cluster counts as removed from the repository (removed-kustomizations).',
    flag: {
      arg: 'GLOB',
      multiple: true,
      help: 'Kustomization files to leave out (repeatable, or comma-separated)',
    },
  },
  {
    input: 'target-namespace',
    field: 'targetNamespace',
    kind: 'string',
    description:
      "spec.targetNamespace for path: the namespace of every namespaced object (kustomize's namespace transformer).",
    flag: { arg: 'NS', help: 'spec.targetNamespace for --path' },
  },
  {
    input: 'allow-remote-bases',
    field: 'allowRemoteBases',
    kind: 'boolean',
    default: 'false',
    description:
      'Let kustomize fetch remote resources and components (git or https URLs). Off by default: the build uses only the checked-out source.',
    flag: { help: 'let kustomize fetch remote resources and components' },
  },
  {
    input: 'kustomize-path',
    field: 'kustomizeBin',
    kind: 'string',
    fallback: 'kustomize',
    description: "kustomize binary to run. Empty: kustomize on PATH (preinstalled on GitHub's Ubuntu runners).",
    flag: { arg: 'BIN', help: 'kustomize binary', defaultText: 'kustomize on PATH' },
  },
  {
    input: 'concurrency',
    field: 'concurrency',
    kind: 'number',
    check: { min: 1, max: 64 },
    default: '8',
    description: 'Server-side dry-runs, and writes of objects of one kind, in flight at once.',
    flag: { arg: 'N', help: 'dry-runs, and writes of objects of one kind, in flight at once' },
  },
  {
    input: 'always-dry-run',
    field: 'alwaysDryRun',
    kind: 'boolean',
    default: 'false',
    description:
      'Dry-run every object, as Flux does. By default an object whose managed fields show that our apply would leave it as it is (every desired field live with the same value, owned by our field manager, and nothing else owned) is not dry-run, which makes an unchanged run cost one list per resource and namespace. The dry-run also runs admission webhooks and validation again: set this to true to have a newly added policy report objects that no longer pass.',
    flag: { help: 'dry-run every object, also those whose managed fields show them unchanged' },
  },
  {
    input: 'override-manager-before-dry-run',
    field: 'overrideManagerBeforeDryRun',
    kind: 'list',
    description:
      "Field managers (one per line or comma-separated; a name also matches the managers whose names begin with it, as Flux's --override-manager-before-dry-run does) whose fields are taken over before an object's dry-run: their Apply and Update entries of the live object's managedFields are merged into field-manager's, so that a field a foreign manager co-owns (a break-glass kubectl edit under another name, a legacy controller's PUT) no longer wedges the dry-run or keeps a field removed from Git in the cluster. The takeover is written before the dry-run, even if the apply then fails; objects with kustomize.toolkit.fluxcd.io/ssa: Merge, IfNotPresent or Ignore are left alone. A preview writes nothing: when an object's dry-run fails and a takeover is pending, its message says so.",
    flag: {
      arg: 'NAME',
      multiple: true,
      help: 'field managers whose fields are taken over before the dry-run (repeatable, or comma-separated)',
    },
  },
  {
    input: 'github-token',
    field: 'githubToken',
    setting: 'github.token',
    kind: 'string',
    default: '${{ github.token }}',
    secret: 'whole',
    description:
      'Token for the sticky PR comment (preview mode; needs pull-requests: write) and the check run (needs checks: write). Empty: neither is posted; the job summary always is. On a pull request from a fork the token is read-only, so only the job summary is written.',
    noFlag: 'the CLI posts no PR comment or check run',
  },
  {
    input: 'prune',
    field: 'prune',
    kind: 'boolean',
    description:
      "With path: delete objects that left Git since the last run (spec.prune); only objects in this Kustomization's inventory that still carry its owner labels, never ones marked kustomize.toolkit.fluxcd.io/prune: disabled. Default false. With kustomizations, use spec.prune.",
    flag: { help: 'spec.prune for --path: delete what left Git (diff shows what would go)' },
  },
  {
    input: 'wait',
    field: 'wait',
    kind: 'boolean',
    description:
      "With path: wait until every applied object is healthy (kstatus rules, Flux's Job rule), failing fast on Failed. Default false. With kustomizations, use spec.wait.",
    flag: { help: 'spec.wait for --path: wait until every applied object is healthy, failing fast on Failed' },
  },
  {
    input: 'timeout',
    field: 'timeout',
    kind: 'duration',
    parse: 'flux-duration',
    description: 'With path and wait: how long to wait, as a Flux duration (90s, 5m). Default 5m.',
    flag: { arg: 'D', help: 'spec.timeout for --path: how long --wait waits', defaultText: '5m' },
  },
  {
    input: 'force',
    field: 'force',
    kind: 'boolean',
    description:
      'With path: recreate objects whose immutable fields changed (spec.force). Default false. With kustomizations, use spec.force.',
    flag: { help: 'spec.force for --path: recreate objects whose immutable fields changed' },
  },
  {
    input: 'sops-age-key',
    field: 'sopsAgeKey',
    kind: 'multiline',
    secret: 'lines',
    description:
      'age identities (the text of an age key file, one or more AGE-SECRET-KEY-1... lines) for SOPS decryption; masked at once. Decryption runs when this or sops-pgp-key is given, or when a Kustomization sets spec.decryption.',
    flag: { arg: 'FILE', value: 'file', help: 'age identities for SOPS decryption' },
  },
  {
    input: 'sops-pgp-key',
    field: 'sopsPgpKey',
    kind: 'multiline',
    secret: 'lines',
    description: 'ASCII-armoured OpenPGP private keys (without passphrase) for SOPS decryption; masked at once.',
    flag: { arg: 'FILE', value: 'file', help: 'armoured OpenPGP private keys for SOPS decryption' },
  },
  {
    input: 'sops-verify-mac',
    field: 'sopsVerifyMac',
    kind: 'boolean',
    default: 'true',
    description:
      'Check the MAC of every SOPS document so that a tampered file fails the run. false mirrors Flux, which does not check it.',
    flag: { help: 'skip SOPS MAC checks (Flux skips them)' },
  },
  {
    input: 'sops-vault-addresses',
    field: 'sopsVaultAddresses',
    kind: 'list',
    parse: 'vault-addresses',
    description:
      "HashiCorp Vault (or OpenBao) base URLs, one per line or comma-separated (https://vault.example.com:8200), that SOPS files may name in an hc_vault key. Vault is sent the runner's token (VAULT_TOKEN or sops.vault-token), so a key naming any other address is not contacted and fails. Empty: no Vault is contacted.",
    flag: {
      arg: 'URL',
      multiple: true,
      help: "Vault base URLs that SOPS files' hc_vault keys may name (repeatable, or comma-separated); no other Vault is contacted or sent the token",
    },
  },
  {
    input: 'vars',
    field: 'vars',
    kind: 'map',
    description:
      'Variables for postBuild substitution, as a YAML or JSON map (for example from GitHub vars). Lowest precedence: substituteFrom and postBuild.substitute override them. With path, they enable substitution; with kustomizations, they apply where spec.postBuild is set.',
    flag: {
      name: 'var',
      arg: 'NAME=VALUE',
      multiple: true,
      value: 'var',
      help: 'a variable for postBuild substitution (repeatable; below substituteFrom and postBuild.substitute in precedence); with --path it enables substitution',
    },
  },
  {
    input: 'secret-vars',
    field: 'secretVars',
    kind: 'map',
    secret: 'values',
    description: 'Like vars, for values from GitHub secrets: every value is masked in logs.',
    flag: {
      name: 'secret-var',
      arg: 'NAME=VALUE',
      multiple: true,
      value: 'var',
      help: 'like --var, for a secret: its value is replaced by *** in the output and the report',
    },
  },
  {
    input: 'strict-substitute',
    field: 'strictSubstitute',
    kind: 'boolean',
    default: 'true',
    description:
      'Fail when a variable without a default is not set (Flux default). false: unset variables become empty.',
    flag: { help: 'unset variables without a default become "" instead of failing' },
  },
  {
    input: 'drift-correction',
    field: 'driftCorrection',
    kind: 'boolean',
    default: 'false',
    description:
      'In drift mode, apply when drift is found (as Flux corrects drift on every reconcile); the outputs still say drift was detected.',
    flag: { help: 'drift: apply when drift is found (the report still says drift was found)' },
  },
  {
    input: 'default-service-account',
    field: 'defaultServiceAccount',
    kind: 'string',
    check: { pattern: '^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$', expects: 'a ServiceAccount name (DNS-1123 subdomain)' },
    description:
      "The ServiceAccount to impersonate for Kustomizations without spec.serviceAccountName, as kustomize-controller's --default-service-account: every dry-run, apply, health read and prune of such a Kustomization acts as system:serviceaccount:<its namespace>:<this name>, so it can do no more than that account's RBAC allows. The inventory, the lock, substituteFrom and decryption Secrets keep the action's identity, as in Flux.",
    flag: {
      arg: 'NAME',
      help: "the ServiceAccount to act as for Kustomizations without spec.serviceAccountName (Flux's --default-service-account)",
    },
  },
  {
    input: 'no-cross-namespace-refs',
    field: 'noCrossNamespaceRefs',
    kind: 'boolean',
    default: 'false',
    description:
      "Refuse a Kustomization whose spec.sourceRef names another namespace, as kustomize-controller's --no-cross-namespace-refs.",
    flag: {
      help: "refuse a Kustomization whose spec.sourceRef names another namespace (Flux's --no-cross-namespace-refs)",
    },
  },
  {
    input: 'inventory-namespace',
    field: 'inventoryNamespace',
    kind: 'string',
    check: { pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$', expects: 'a namespace name (DNS-1123 label)' },
    description:
      "Namespace of the inventory ConfigMaps and lock Leases (created when missing). Default: each Kustomization's own namespace.",
    flag: { arg: 'NS', help: 'where inventories and locks live', defaultText: "the Kustomization's namespace" },
  },
  {
    input: 'prune-max-share',
    field: 'pruneMaxShare',
    kind: 'share',
    default: '50%',
    description:
      'Refuse to prune when one run would delete more than this share of an inventory (prunes of up to 5 objects are never held back). 100% turns the guard off.',
    flag: { arg: 'P', help: 'refuse a prune of more than P of an inventory' },
  },
  {
    input: 'allow-large-prune',
    field: 'allowLargePrune',
    kind: 'boolean',
    default: 'false',
    description:
      'Lift the prune guards for this run: a build that renders nothing, a prune above prune-max-share, and a Namespace pruned with objects that other Kustomizations (or no one) applied in it.',
    flag: {
      help: 'lift the prune guards for this run (also: pruning a Namespace that holds objects of other Kustomizations or of none)',
    },
  },
  {
    input: 'destructive-approval-label',
    field: 'destructiveApprovalLabel',
    kind: 'string',
    description:
      "Make destructive changes need a reviewer's yes: an apply refuses, before it writes anything, to delete (prune, a rename's old object, a removed Kustomization's objects) or recreate (force on an immutable field) a PersistentVolumeClaim, PersistentVolume, Service, Namespace, CustomResourceDefinition, Deployment, StatefulSet or DaemonSet, unless the merged pull request of the pushed commit carries this label (looked up through the API with github-token), or the live object carries the annotation kustomize-reconcile.dev/destructive: allowed. A preview says which objects need it. Empty (the default): no such check.",
    flag: {
      arg: 'LABEL',
      help: 'refuse to delete or recreate objects of destructive kinds unless each carries the annotation kustomize-reconcile.dev/destructive: allowed (the CLI looks up no pull request)',
    },
  },
  {
    input: 'comment',
    field: 'comment',
    setting: 'github.comment',
    kind: 'boolean',
    default: 'true',
    description:
      'In preview mode on a pull request, post the preview as one sticky comment, updated in place by later runs.',
    noFlag: 'the CLI posts no PR comment or check run',
  },
  {
    input: 'check-run',
    field: 'checkRun',
    setting: 'github.checkRun',
    kind: 'boolean',
    default: 'true',
    description:
      "Create a check run on the commit (the PR's head commit) with the result, and annotations on the source lines of failing objects.",
    noFlag: 'the CLI posts no PR comment or check run',
  },
  {
    input: 'removed-kustomizations',
    field: 'removedKustomizations',
    kind: 'enum',
    values: ['report', 'delete'],
    default: 'report',
    description:
      'What to do when a Kustomization file matched by kustomizations is gone from the repository but its inventory remains: report (its objects are listed as orphaned and left alone) or delete (its recorded deletionPolicy is applied: MirrorPrune deletes its objects if it had prune: true, Delete and WaitForTermination delete them, Orphan leaves them; then its inventory is removed).',
    flag: {
      arg: 'report|delete',
      help: 'a Kustomization file that is gone: report its objects as orphaned, or apply its deletionPolicy',
    },
  },
  {
    input: 'lock-timeout',
    field: 'lockTimeout',
    setting: 'lockTimeoutMs',
    kind: 'duration',
    default: '10m',
    description:
      'How long to wait for another run that holds the lock on a Kustomization before failing, as a Flux duration.',
    flag: { arg: 'D', help: "how long to wait for another run's lock" },
  },
  {
    input: 'connect-timeout',
    field: 'connectTimeout',
    setting: 'clusterTimeouts.connectMs',
    kind: 'duration',
    check: { min: 1 },
    default: '10s',
    description:
      'How long opening a connection to the cluster (TCP and TLS) may take, as a Flux duration; one more try follows, then the run fails.',
    flag: { arg: 'D', help: 'how long connecting to the cluster may take' },
  },
  {
    input: 'request-timeout',
    field: 'requestTimeout',
    setting: 'clusterTimeouts.requestMs',
    kind: 'duration',
    check: { min: 1 },
    default: '60s',
    description:
      'How long one request to the cluster may take, its retries included, as a Flux duration; also the longest an exec credential plugin may run. A cluster that cannot be reached fails the run once, not once per object.',
    flag: { arg: 'D', help: 'how long one request may take, retries included; also bounds an exec credential plugin' },
  },
  {
    input: 'build-timeout',
    field: 'buildTimeout',
    setting: 'buildLimits.timeoutMs',
    kind: 'duration',
    check: { min: 1 },
    default: '5m',
    description:
      'How long one kustomize build (and the processes it starts) may run before it is stopped, as a Flux duration; a tree from a pull request must not hold the runner forever.',
    flag: { arg: 'D', help: 'stop kustomize (and what it starts) after D' },
  },
  {
    input: 'build-memory-limit',
    field: 'buildMemoryLimit',
    setting: 'buildLimits.memoryBytes',
    kind: 'size',
    check: { min: 64 * 1024 ** 2 },
    default: '2Gi',
    description:
      'How much memory one kustomize build (and the processes it starts) may use before it is stopped, such as 512Mi or 2Gi; a few hundred bytes of YAML aliases can otherwise take gigabytes. Linux runners only.',
    flag: { arg: 'M', help: 'stop kustomize when it and what it starts use more than M' },
  },
  {
    input: 'build-cache',
    field: 'buildCache',
    kind: 'string',
    description:
      "A directory, outside the workspace, that keeps kustomize's output between runs, keyed by a hash of everything the build reads (every file of the prepared copy, the Flux spec fields merged in, the kustomize binary's bytes and its environment): a build with exactly the same input skips kustomize, any change builds again. Never kept: builds with SOPS files decrypted before kustomize, or with remote bases. Default: $RUNNER_TEMP/kustomize-reconcile-builds, restored from the Actions cache before the run and saved to it after (actions-cache), so that a second run of the same commit builds nothing; the Actions cache keeps a pull request's saves in its own ref's scope. Some builds never need it: a plain directory of manifests, and an overlay of the fields built in process, are built with kustomize's answer without running it.",
    flag: {
      arg: 'DIR',
      help: "keep kustomize's output in DIR (outside --root) between runs, keyed by everything the build reads",
      defaultText: 'none: every build that needs kustomize runs it',
    },
  },
  {
    input: 'actions-cache',
    field: 'actionsCache',
    kind: 'boolean',
    default: 'true',
    description:
      "Keep build-cache across workflow runs with the Actions cache (the toolkit's cache package, as actions/cache): restored before the run, saved after it when the run kept a build it did not have, one cache entry per save (kustomize-reconcile-builds-<os>-<arch>-<hash>). A cache service that fails costs the run those builds and one warning, never the run; without one (act without its cache server, a GitHub Enterprise Server without the cache), and with false, the directory lives as long as the job.",
    noFlag: 'the CLI keeps --build-cache where it is; there is no Actions cache',
  },
  {
    input: 'cluster',
    field: 'cluster',
    kind: 'string',
    check: {
      pattern: '^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$',
      expects: 'the name of a directory under clusters/ (letters, digits, - _ .)',
    },
    description:
      "Reconcile only the Kustomization files of one cluster of a repository that drives several: those under clusters/NAME/ (Flux's layout; a directory named clusters at any depth). mode: plan gives each matrix entry its cluster. Default: every file kustomizations matches.",
    flag: { arg: 'NAME', help: 'only the Kustomization files under clusters/NAME/' },
  },
  {
    input: 'select',
    field: 'select',
    kind: 'list',
    parse: 'kustomization-names',
    description:
      "Reconcile only these Kustomizations (NAMESPACE/NAME, one per line or comma-separated) of the files kustomizations (and cluster) match, as mode: plan's matrix hands them to one job each. A dependency that another job reconciles is waited for until its inventory in the cluster says it succeeded at this commit (or its readyExpr holds against that status), up to dependency-timeout, with a progress line each 30 s; when it failed, this one is skipped with the reason. Removed Kustomizations are handled by the job of the cluster's first Kustomization in dependsOn order.",
    flag: {
      arg: 'NS/NAME',
      multiple: true,
      help: 'reconcile only these Kustomizations; dependencies reconciled by other jobs are waited for in the cluster',
    },
  },
  {
    input: 'unchanged-dependencies',
    field: 'unchangedDependencies',
    kind: 'list',
    parse: 'kustomization-names',
    description:
      "With select: the dependencies that no job of this run reconciles (in an affected-only plan, the matrix entry's unchanged field), NAMESPACE/NAME: each is ready when its last recorded run succeeded, whatever the commit. Every other dependency reconciled elsewhere is waited for at this commit.",
    flag: {
      name: 'unchanged-dependency',
      arg: 'NS/NAME',
      multiple: true,
      help: 'with --select: a dependency no job of this run reconciles: ready when its last run succeeded',
    },
  },
  {
    input: 'dependency-timeout',
    field: 'dependencyTimeout',
    setting: 'dependencyTimeoutMs',
    kind: 'duration',
    default: '30m',
    description:
      'With select: how long a Kustomization waits for a dependency that another job reconciles, as a Flux duration, before it is skipped.',
    flag: { arg: 'D', help: 'with --select: how long to wait for dependencies reconciled by other jobs' },
  },
  {
    input: 'report-file',
    field: 'reportFile',
    kind: 'string',
    description:
      "Also write the run's report as JSON (secrets scrubbed) to this file, relative to the workspace, for actions/upload-artifact; mode: report merges the files of a run's jobs into one PR comment and check run.",
    flag: { arg: 'FILE', help: 'also write the report as JSON to FILE (the report command merges such files)' },
  },
  {
    input: 'base',
    field: 'base',
    kind: 'string',
    description:
      "mode: plan: the commit the change starts from; affected lists the Kustomizations whose build reads a file changed between base and head, and their dependents. Default: the pull request's base commit, or the push's before commit. Needs the history (actions/checkout with fetch-depth: 0).",
    flag: { arg: 'REV', help: 'plan: the commit the change starts from (affected is computed when given)' },
  },
  {
    input: 'head',
    field: 'head',
    kind: 'string',
    description:
      "mode: plan: the commit the change ends at. Default: the pull request's head commit, or the pushed commit.",
    flag: { arg: 'REV', help: 'plan: the commit the change ends at', defaultText: 'HEAD' },
  },
  {
    input: 'reports',
    field: 'reports',
    kind: 'list',
    description:
      "mode: report: the report files of the run's jobs (written with report-file), as globs relative to the workspace, e.g. reports/*.json after actions/download-artifact.",
    flag: { arg: 'GLOB', multiple: true, help: 'report: the report files to merge' },
  },
  {
    input: 'matrix',
    field: 'matrix',
    kind: 'string',
    description:
      "mode: report: the plan job's matrix output (needs.plan.outputs.matrix), the jobs whose reports are expected: an entry without a report file fails the merge with a row naming it, and so does a Kustomization the matrix does not have. Empty: a job that wrote no report file cannot be noticed (only two reports of one Kustomization are), and the merged report says so.",
    flag: {
      arg: 'FILE',
      help: "report: the plan's matrix, a file holding plan --output json (or the action's matrix output); each entry must have one report",
    },
  },
] as const satisfies readonly Option[];

/** The table with each entry's literal types: Settings' type is derived from it (settings.ts). */
export type InputTable = typeof DECLARED;
export const INPUTS: readonly Option[] = DECLARED;

/** Flags of the CLI alone: the source root, build's secrets, the output format, help. */
export const CLI_ONLY: readonly Option[] = [
  {
    kind: 'string',
    flag: { name: 'root', arg: 'DIR', help: 'source root; --path may not leave it', defaultText: 'current directory' },
  },
  {
    kind: 'boolean',
    flag: { name: 'show-secrets', help: 'build: decrypt SOPS and print secret values instead of masks' },
  },
  {
    kind: 'enum',
    values: ['text', 'json'],
    default: 'text',
    flag: { name: 'output', arg: 'text|json', help: 'json prints the report value' },
  },
  { kind: 'boolean', flag: { name: 'help', short: 'h', help: 'show this help' } },
];

/** Every option, inputs first. */
export const OPTIONS: readonly Option[] = [...INPUTS, ...CLI_ONLY];
