#!/usr/bin/env node
// The cloud side of the README's EKS, GKE and AKS recipes, for the stand-ins of their login actions
// (see README.md): no cloud is reachable here, so the login stand-ins mint a real ServiceAccount
// token on the test cluster (TokenRequest, with the cluster's admin kubeconfig in
// KR_ACT_CLOUD_KUBECONFIG) and put fake CLIs on the job's PATH that behave, for what the recipes
// use, as the real ones do: `aws eks update-kubeconfig`, `gcloud container clusters get-credentials`
// and `az aks get-credentials` (with `kubelogin convert-kubeconfig`) write the kubeconfig shape the
// real tools write, exec plugin included, pointing at the test cluster; `aws eks get-token`,
// `gke-gcloud-auth-plugin` and `kubelogin get-token` print an ExecCredential holding the minted
// token, and only with the credentials the login step left in the environment. Every call is
// appended to KR_ACT_CLOUD_LOG (one JSON line) for the runs to check.
//
//   node cloud.mjs login aws|gcp|azure      (a login stand-in's step; inputs in IN_*)
//   node cloud.mjs install aws|gcloud|gke-gcloud-auth-plugin|az|kubelogin
//   node cloud.mjs aks-set-context          (azure/aks-set-context's stand-in)
//   node cloud.mjs TOOL ARGS...             (a fake CLI, run through the wrapper `install` wrote)
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { homedir } from 'node:os';

import { dirname, join } from 'node:path';
import { fileURLToPath, URL } from 'node:url';
import { parse, stringify } from 'yaml';

const SELF = fileURLToPath(import.meta.url);
const EXEC_API = 'client.authentication.k8s.io/v1beta1';
/** AKS's Entra ID server application, the --server-id of every AKS kubeconfig. */
const AKS_SERVER_ID = '6dae42f8-4368-4678-94ff-3960e28e3630';
/** The Azure CLI's client id, which az writes into an unconverted (devicecode) kubeconfig. */
const AZ_CLIENT_ID = '80faf920-1908-4b52-b5ef-a8e264bedab9';

class Refusal extends Error {}
const fail = (message) => {
  throw new Refusal(message);
};
const env = (name) => process.env[name] ?? '';

/** The state a login left for the fake CLIs: where it lives is written into their wrappers. */
function stateDir() {
  const dir = env('KR_CLOUD_STATE') || join(env('RUNNER_TEMP') || '/tmp', 'kr-cloud');
  mkdirSync(dir, { recursive: true });
  return dir;
}
const statePath = (provider) => join(stateDir(), `${provider}.json`);
function readState(provider, tool, hint) {
  const p = statePath(provider);
  if (!existsSync(p)) fail(`${tool}: not logged in (${hint})`);
  return JSON.parse(readFileSync(p, 'utf8'));
}

function log(entry) {
  const file = env('KR_ACT_CLOUD_LOG');
  if (file) appendFileSync(file, `${JSON.stringify(entry)}\n`);
}

// --- the test cluster, as its admin --------------------------------------------------------------

function admin() {
  const file = env('KR_ACT_CLOUD_KUBECONFIG');
  if (!file) fail('KR_ACT_CLOUD_KUBECONFIG is not set: the runs name the test cluster the recipes reach');
  const doc = parse(readFileSync(file, 'utf8'));
  const ctx = doc.contexts.find((c) => c.name === doc['current-context']).context;
  const cluster = doc.clusters.find((c) => c.name === ctx.cluster).cluster;
  const user = doc.users.find((u) => u.name === ctx.user).user;
  return { server: cluster.server, ca: cluster['certificate-authority-data'], user };
}

function request(a, method, path, body) {
  const b64 = (s) => Buffer.from(s ?? '', 'base64');
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, a.server),
      {
        method,
        ca: b64(a.ca),
        cert: b64(a.user['client-certificate-data']),
        key: b64(a.user['client-key-data']),
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/**
 * A token of ServiceAccount kr-cloud/<provider>-deployer (bound to cluster-admin), by TokenRequest:
 * what the cloud's IAM would hand the workflow's identity, as far as the cluster can tell.
 */
async function mint(provider) {
  const a = admin();
  const sa = `${provider}-deployer`;
  const create = async (path, body) => {
    const r = await request(a, 'POST', path, body);
    if (r.status !== 201 && r.status !== 409) fail(`POST ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  };
  await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kr-cloud' } });
  await create('/api/v1/namespaces/kr-cloud/serviceaccounts', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: sa },
  });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `kr-cloud-${sa}` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: sa, namespace: 'kr-cloud' }],
  });
  const r = await request(a, 'POST', `/api/v1/namespaces/kr-cloud/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  if (r.status !== 201) fail(`TokenRequest for ${sa}: ${r.status} ${r.text.slice(0, 200)}`);
  const status = JSON.parse(r.text).status;
  return { server: a.server, ca: a.ca, token: status.token, expires: status.expirationTimestamp, user: sa };
}

// --- the job's files ------------------------------------------------------------------------------

const appendTo = (variable, line) => appendFileSync(env(variable), `${line}\n`);
const exportVariable = (name, value) => appendTo('GITHUB_ENV', `${name}=${value}`);
const setOutput = (name, value) => appendTo('GITHUB_OUTPUT', `${name}=${value}`);
const mask = (value) => console.log(`::add-mask::${value}`);
function input(name, { required = false } = {}) {
  const v = env(`IN_${name.replace(/-/g, '_').toUpperCase()}`).trim();
  if (required && !v) fail(`Input required and not supplied: ${name}`);
  return v;
}
function boolInput(name) {
  const v = input(name).toLowerCase() || 'false';
  if (v !== 'true' && v !== 'false') fail(`${name}: '${v}' is not true or false`);
  return v === 'true';
}
/** GitHub gives a job the OIDC token request variables only with `permissions: id-token: write`. */
function needIdToken(action) {
  if (!env('ACTIONS_ID_TOKEN_REQUEST_URL') || !env('ACTIONS_ID_TOKEN_REQUEST_TOKEN')) {
    fail(
      `${action}: no ACTIONS_ID_TOKEN_REQUEST_URL: the workflow must grant \`permissions: id-token: write\` for OIDC`,
    );
  }
}

/** Puts a fake `tool` on the job's PATH (a wrapper running this script), as an installer would. */
function install(tool) {
  const bin = join(stateDir(), 'bin');
  mkdirSync(bin, { recursive: true });
  const wrapper = join(bin, tool);
  const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      `# ${tool} (stand-in): see test/act/actions/cloud.mjs`,
      `KR_CLOUD_STATE=${quote(stateDir())} KR_ACT_CLOUD_LOG=${quote(env('KR_ACT_CLOUD_LOG'))} \\`,
      `  exec ${quote(process.execPath)} ${quote(SELF)} ${tool} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
  if (!(env('PATH').split(':').includes(bin) || readIf(env('GITHUB_PATH')).split('\n').includes(bin))) {
    appendTo('GITHUB_PATH', bin);
  }
}
const readIf = (p) => (p && existsSync(p) ? readFileSync(p, 'utf8') : '');

// --- kubeconfig files -----------------------------------------------------------------------------

/** The file kubectl and the CLIs write to: the first of $KUBECONFIG, else ~/.kube/config. */
const defaultKubeconfig = () => env('KUBECONFIG').split(':').find(Boolean) || join(homedir(), '.kube', 'config');

/** Merges one cluster, user and context into the kubeconfig at `file` (made if absent), as current. */
function mergeKubeconfig(file, { name, cluster, user, context = name, userName = name }) {
  const doc = existsSync(file) ? (parse(readFileSync(file, 'utf8')) ?? {}) : {};
  const put = (list, entry) => [...(list ?? []).filter((e) => e.name !== entry.name), entry];
  const out = {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: doc.preferences ?? {},
    clusters: put(doc.clusters, { name, cluster }),
    users: put(doc.users, { name: userName, user }),
    contexts: put(doc.contexts, { name: context, context: { cluster: name, user: userName } }),
    'current-context': context,
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stringify(out), { mode: 0o600 });
  chmodSync(file, 0o600);
}

function execCredential(state, tool) {
  const info = env('KUBERNETES_EXEC_INFO');
  let apiVersion = EXEC_API;
  if (info) apiVersion = JSON.parse(info).apiVersion ?? EXEC_API;
  log({ tool, args: process.argv.slice(3), execInfo: info ? JSON.parse(info) : null, user: state.user });
  process.stdout.write(
    `${JSON.stringify({
      kind: 'ExecCredential',
      apiVersion,
      spec: {},
      status: { expirationTimestamp: state.expires, token: state.token },
    })}\n`,
  );
}

/** `--flag value` and `--flag=value` pairs and the words between them. */
function flags(args, known, bools = []) {
  const out = { _: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('-')) {
      out._.push(a);
      continue;
    }
    const [k, inline] = a.split(/=(.*)/s);
    if (bools.includes(k)) out[k] = true;
    else if (known.includes(k)) out[k] = inline ?? args[++i];
    else fail(`unrecognized arguments: ${a}`);
    if (out[k] === undefined) fail(`argument ${k}: expected one argument`);
  }
  return out;
}

// --- the fake CLIs --------------------------------------------------------------------------------

function aws(args) {
  // Global options may come before the command, as the kubeconfig's `--region R eks get-token` has it.
  const f = flags(args, ['--region', '--name', '--kubeconfig', '--alias', '--cluster-name', '--output', '--role-arn']);
  const [service, command] = f._;
  const state = readState(
    'aws',
    'aws',
    'Unable to locate credentials. You can configure credentials by running "aws login"',
  );
  if (env('AWS_ACCESS_KEY_ID') !== state.accessKeyId || env('AWS_SESSION_TOKEN') !== state.sessionToken) {
    fail('Unable to locate credentials: AWS_ACCESS_KEY_ID / AWS_SESSION_TOKEN are not the ones the login exported');
  }
  const region = f['--region'] || env('AWS_REGION') || env('AWS_DEFAULT_REGION');
  if (!region) fail('You must specify a region. You can also configure your region by running "aws configure".');
  if (service === 'eks' && command === 'update-kubeconfig') {
    if (!f['--name']) fail('the following arguments are required: --name');
    const arn = `arn:aws:eks:${region}:${state.account}:cluster/${f['--name']}`;
    const file = f['--kubeconfig'] || defaultKubeconfig();
    const exec = {
      apiVersion: EXEC_API,
      args: ['--region', region, 'eks', 'get-token', '--cluster-name', f['--name'], '--output', 'json'],
      command: 'aws',
    };
    mergeKubeconfig(file, {
      name: arn,
      context: f['--alias'] || arn,
      cluster: { 'certificate-authority-data': state.ca, server: state.server },
      user: { exec },
    });
    log({ tool: 'aws', args, wrote: file });
    console.log(`Added new context ${f['--alias'] || arn} to ${file}`);
    return;
  }
  if (service === 'eks' && command === 'get-token') {
    if (!f['--cluster-name']) fail('the following arguments are required: --cluster-name');
    if (f['--output'] && f['--output'] !== 'json') fail(`--output ${f['--output']}: the exec plugin reads JSON`);
    execCredential(state, 'aws');
    return;
  }
  fail(
    `aws ${service ?? ''} ${command ?? ''}: not part of the stand-in (only eks update-kubeconfig and eks get-token)`,
  );
}

function gcloudCredentials(tool) {
  const state = readState('gcp', tool, 'You do not currently have an active account selected: run gcloud auth login');
  const file = env('CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE');
  if (!file || !existsSync(file) || JSON.parse(readFileSync(file, 'utf8')).audience !== state.audience) {
    fail(
      `${tool}: You do not currently have an active account selected (CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE is not the auth step's file)`,
    );
  }
  return state;
}

function gcloud(args) {
  const f = flags(
    args,
    ['--location', '--region', '--zone', '--project', '--format'],
    ['--internal-ip', '--dns-endpoint'],
  );
  const [group, sub, command, name] = f._;
  if (group === 'version' || group === '--version') {
    console.log('Google Cloud SDK (stand-in)');
    return;
  }
  if (group !== 'container' || sub !== 'clusters' || command !== 'get-credentials') {
    fail(`gcloud ${f._.join(' ')}: not part of the stand-in (only container clusters get-credentials)`);
  }
  const state = gcloudCredentials('gcloud');
  if (!name) fail('argument NAME: Must be specified.');
  const location =
    f['--location'] || f['--region'] || f['--zone'] || env('CLOUDSDK_COMPUTE_REGION') || env('CLOUDSDK_COMPUTE_ZONE');
  if (!location) fail('One of [--location, --region, --zone] must be supplied.');
  const project = f['--project'] || env('CLOUDSDK_CORE_PROJECT');
  if (!project) fail('The required property [project] is not currently set.');
  const id = `gke_${project}_${location}_${name}`;
  const file = defaultKubeconfig();
  mergeKubeconfig(file, {
    name: id,
    cluster: { 'certificate-authority-data': state.ca, server: state.server },
    user: {
      exec: {
        apiVersion: EXEC_API,
        command: 'gke-gcloud-auth-plugin',
        installHint:
          'Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin',
        provideClusterInfo: true,
      },
    },
  });
  log({ tool: 'gcloud', args, wrote: file });
  console.error('Fetching cluster endpoint and auth data.');
  console.error(`kubeconfig entry generated for ${name}.`);
}

function gkePlugin(args) {
  if (args[0] === '--version') {
    console.log('Kubernetes v1.33.0-alpha+stand-in');
    return;
  }
  if (args.length > 0) fail(`gke-gcloud-auth-plugin: unknown arguments ${args.join(' ')}`);
  execCredential(gcloudCredentials('gke-gcloud-auth-plugin'), 'gke-gcloud-auth-plugin');
}

function az(args) {
  const f = flags(
    args,
    ['--resource-group', '-g', '--name', '-n', '-f', '--file', '--subscription', '--context'],
    ['--admin', '--public-fqdn', '--overwrite-existing'],
  );
  const state = readState('azure', 'az', "Please run 'az login' to setup account.");
  const [group, command] = f._;
  if (group !== 'aks' || command !== 'get-credentials') {
    fail(`az ${f._.join(' ')}: not part of the stand-in (only aks get-credentials)`);
  }
  const rg = f['--resource-group'] || f['-g'];
  const name = f['--name'] || f['-n'];
  if (!rg || !name) fail('the following arguments are required: --resource-group/-g, --name/-n');
  if (f['--admin'])
    fail(
      '(BadRequest) Getting static credential is not allowed because this cluster is set to disable local accounts.',
    );
  const file = f['-f'] || f['--file'] || defaultKubeconfig();
  // An AKS cluster with Entra ID: az writes kubelogin's devicecode login, which needs a person at a
  // terminal; kubelogin convert-kubeconfig makes it one a CI job can use.
  mergeKubeconfig(file, {
    name,
    userName: `clusterUser_${rg}_${name}`,
    cluster: { 'certificate-authority-data': state.ca, server: state.server },
    user: {
      exec: {
        apiVersion: EXEC_API,
        args: [
          'get-token',
          '--environment',
          'AzurePublicCloud',
          '--server-id',
          AKS_SERVER_ID,
          '--client-id',
          AZ_CLIENT_ID,
          '--tenant-id',
          state.tenant,
          '--login',
          'devicecode',
        ],
        command: 'kubelogin',
        env: null,
        installHint: 'kubelogin is not installed which is required to connect to AAD enabled cluster.',
        provideClusterInfo: false,
      },
    },
  });
  log({ tool: 'az', args, wrote: file });
  console.error(`Merged "${name}" as current context in ${file}`);
}

function kubelogin(args) {
  const [command, ...rest] = args;
  if (command === '--version' || command === 'version') {
    console.log('kubelogin version (stand-in)');
    return;
  }
  if (command === 'convert-kubeconfig') {
    const f = flags(rest, [
      '-l',
      '--login',
      '--kubeconfig',
      '--context',
      '--federated-token-file',
      '--client-id',
      '--tenant-id',
    ]);
    const login = f['-l'] || f['--login'] || 'devicecode';
    if (!['azurecli', 'workloadidentity', 'devicecode'].includes(login))
      fail(`convert-kubeconfig: login mode ${login} is not part of the stand-in`);
    const file = f['--kubeconfig'] || defaultKubeconfig();
    const doc = parse(readFileSync(file, 'utf8'));
    for (const u of doc.users ?? []) {
      const exec = u.user?.exec;
      if (!exec || exec.command !== 'kubelogin') continue;
      const serverId = exec.args[exec.args.indexOf('--server-id') + 1];
      exec.args = ['get-token', '--login', login, '--server-id', serverId];
      if (login === 'workloadidentity') {
        exec.args.push(
          '--client-id',
          f['--client-id'] || env('AZURE_CLIENT_ID'),
          '--tenant-id',
          f['--tenant-id'] || env('AZURE_TENANT_ID'),
        );
      }
    }
    writeFileSync(file, stringify(doc), { mode: 0o600 });
    log({ tool: 'kubelogin', args, wrote: file });
    return;
  }
  if (command === 'get-token') {
    const f = flags(rest, [
      '-l',
      '--login',
      '--server-id',
      '--environment',
      '--client-id',
      '--tenant-id',
      '--federated-token-file',
    ]);
    const login = f['-l'] || f['--login'];
    if (f['--server-id'] !== AKS_SERVER_ID) fail(`get-token: --server-id ${f['--server-id']} is not AKS's`);
    if (login === 'devicecode')
      fail(
        'get-token: devicecode login needs a person to open a browser: convert the kubeconfig (kubelogin convert-kubeconfig -l azurecli)',
      );
    if (login !== 'azurecli') fail(`get-token: login mode ${login} is not part of the stand-in`);
    execCredential(readState('azure', 'kubelogin', "azurecli: Please run 'az login' to setup account."), 'kubelogin');
    return;
  }
  fail(`kubelogin ${command ?? ''}: not part of the stand-in`);
}

// --- the stand-ins' own steps ---------------------------------------------------------------------

async function login(provider) {
  if (provider === 'aws') {
    const region = input('aws-region', { required: true });
    const role = input('role-to-assume');
    if (input('aws-access-key-id') || input('aws-secret-access-key')) {
      fail('configure-aws-credentials: the recipes use OIDC: no aws-access-key-id nor aws-secret-access-key');
    }
    if (!role) fail('configure-aws-credentials: role-to-assume is required for OIDC');
    const m = /^arn:aws[a-z-]*:iam::(\d{12}):role\/[\w+=,.@/-]+$/.exec(role);
    if (!m)
      fail(
        `configure-aws-credentials: role-to-assume '${role}' is not a role ARN (arn:aws:iam::<account>:role/<name>)`,
      );
    needIdToken('configure-aws-credentials');
    const state = {
      ...(await mint('aws')),
      account: m[1],
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(20).toString('base64'),
      sessionToken: randomBytes(32).toString('base64'),
    };
    writeFileSync(statePath('aws'), JSON.stringify(state), { mode: 0o600 });
    for (const v of [state.secretAccessKey, state.sessionToken, state.token]) mask(v);
    exportVariable('AWS_REGION', region);
    exportVariable('AWS_DEFAULT_REGION', region);
    exportVariable('AWS_ACCESS_KEY_ID', state.accessKeyId);
    exportVariable('AWS_SECRET_ACCESS_KEY', state.secretAccessKey);
    exportVariable('AWS_SESSION_TOKEN', state.sessionToken);
    setOutput('aws-account-id', state.account);
    // The runner images have the AWS CLI; here it is the stand-in.
    install('aws');
    console.log(`configure-aws-credentials stand-in: assumed ${role} (as ServiceAccount kr-cloud/${state.user})`);
    return;
  }
  if (provider === 'gcp') {
    const wip = input('workload_identity_provider');
    if (input('credentials_json')) fail('auth: the recipes use Workload Identity Federation: no credentials_json');
    if (!wip) fail('auth: one of workload_identity_provider or credentials_json is required');
    if (!/^projects\/\d+\/locations\/global\/workloadIdentityPools\/[^/]+\/providers\/[^/]+$/.test(wip)) {
      fail(
        `auth: workload_identity_provider '${wip}' must be the provider's full name, projects/<project number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>`,
      );
    }
    const sa = input('service_account');
    if (sa && !/^[^@\s]+@[^@\s]+\.iam\.gserviceaccount\.com$/.test(sa))
      fail(`auth: service_account '${sa}' is not a service account email`);
    needIdToken('auth');
    const state = { ...(await mint('gcp')), audience: `//iam.googleapis.com/${wip}` };
    writeFileSync(statePath('gcp'), JSON.stringify(state), { mode: 0o600 });
    mask(state.token);
    // An external_account credentials file in the workspace, as the real action writes it.
    const creds = join(env('GITHUB_WORKSPACE'), `gha-creds-${randomBytes(8).toString('hex')}.json`);
    writeFileSync(
      creds,
      JSON.stringify({
        type: 'external_account',
        audience: state.audience,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: 'https://sts.googleapis.com/v1/token',
        credential_source: {
          url: env('ACTIONS_ID_TOKEN_REQUEST_URL'),
          format: { type: 'json', subject_token_field_name: 'value' },
        },
        ...(sa
          ? {
              service_account_impersonation_url: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${sa}:generateAccessToken`,
            }
          : {}),
      }),
      { mode: 0o600 },
    );
    for (const v of [
      'CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'GOOGLE_GHA_CREDS_PATH',
    ]) {
      exportVariable(v, creds);
    }
    const project = input('project_id');
    if (project) {
      for (const v of [
        'CLOUDSDK_CORE_PROJECT',
        'CLOUDSDK_PROJECT',
        'GCLOUD_PROJECT',
        'GCP_PROJECT',
        'GOOGLE_CLOUD_PROJECT',
      ]) {
        exportVariable(v, project);
      }
    }
    setOutput('credentials_file_path', creds);
    console.log(`auth stand-in: federated through ${wip} (as ServiceAccount kr-cloud/${state.user})`);
    return;
  }
  if (provider === 'azure') {
    if (input('creds')) fail('azure/login: the recipes use OIDC: no creds');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
    const client = input('client-id');
    const tenant = input('tenant-id');
    const subscription = input('subscription-id');
    if (!client || !tenant)
      fail(
        "azure/login: Using auth-type: SERVICE_PRINCIPAL. Not all values are present. Ensure 'client-id' and 'tenant-id' are supplied.",
      );
    for (const [k, v] of [
      ['client-id', client],
      ['tenant-id', tenant],
      ['subscription-id', subscription],
    ]) {
      if (v && !uuid.test(v)) fail(`azure/login: ${k} '${v}' is not a GUID`);
    }
    if (!subscription && !boolInput('allow-no-subscriptions')) {
      fail("azure/login: Ensure 'subscription-id' is supplied or 'allow-no-subscriptions' is 'true'.");
    }
    needIdToken('azure/login');
    const state = { ...(await mint('azure')), tenant, client, subscription };
    writeFileSync(statePath('azure'), JSON.stringify(state), { mode: 0o600 });
    mask(state.token);
    // The runner images have the Azure CLI; here it is the stand-in.
    install('az');
    console.log(`azure/login stand-in: federated as ${client} (as ServiceAccount kr-cloud/${state.user})`);
    return;
  }
  fail(`login ${provider}: aws, gcp or azure`);
}

function run(tool, args, extraEnv = {}) {
  const r = spawnSync(tool, args, { stdio: 'inherit', env: { ...process.env, ...extraEnv } });
  if (r.error) fail(`${tool}: ${r.error.code === 'ENOENT' ? 'not found on PATH' : r.error.message}`);
  if (r.status !== 0) fail(`${tool} exited with error code ${r.status}`);
}

/** azure/aks-set-context: `az aks get-credentials` into RUNNER_TEMP, KUBECONFIG, then kubelogin. */
function aksSetContext() {
  const rg = input('resource-group', { required: true });
  const name = input('cluster-name', { required: true });
  const admin = boolInput('admin');
  const useKubelogin = boolInput('use-kubelogin') && !admin;
  const publicFqdn = boolInput('public-fqdn');
  const type = (input('resource-type') || 'Microsoft.ContainerService/managedClusters').toLowerCase();
  if (type !== 'microsoft.containerservice/managedclusters')
    fail(`aks-set-context stand-in: resource-type ${type} is not part of it`);
  const path = join(env('RUNNER_TEMP'), `kubeconfig_${Date.now()}`);
  const subscription = input('subscription');
  run('az', [
    'aks',
    'get-credentials',
    '--resource-group',
    rg,
    '--name',
    name,
    '-f',
    path,
    ...(subscription ? ['--subscription', subscription] : []),
    ...(admin ? ['--admin'] : []),
    ...(publicFqdn ? ['--public-fqdn'] : []),
  ]);
  chmodSync(path, 0o600);
  exportVariable('KUBECONFIG', path);
  exportVariable('KUBE_CONFIG_PATH', path);
  if (useKubelogin) run('kubelogin', ['convert-kubeconfig', '-l', 'azurecli'], { KUBECONFIG: path });
}

async function main() {
  const [what, ...args] = process.argv.slice(2);
  try {
    switch (what) {
      case 'login':
        await login(args[0]);
        break;
      case 'install':
        install(args[0]);
        break;
      case 'aks-set-context':
        aksSetContext();
        break;
      case 'aws':
        aws(args);
        break;
      case 'gcloud':
        gcloud(args);
        break;
      case 'gke-gcloud-auth-plugin':
        gkePlugin(args);
        break;
      case 'az':
        az(args);
        break;
      case 'kubelogin':
        kubelogin(args);
        break;
      default:
        fail(`cloud.mjs: unknown command ${what}`);
    }
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    const inStep = ['login', 'install', 'aks-set-context'].includes(what);
    if (inStep) console.log(`::error title=${what} stand-in::${e.message}`);
    else console.error(`${what}: error: ${e.message}`);
    process.exitCode = inStep ? 1 : 255;
  }
}

await main();
