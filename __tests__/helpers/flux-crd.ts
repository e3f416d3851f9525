// Flux's Kustomization CRD on the shared test cluster, from the pinned kustomize-controller module.
import { execFile } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import type { ClusterClient } from '../../src/cluster/client.js';
import { ApiError } from '../../src/cluster/errors.js';
import { eventually } from './cluster.js';

const run = promisify(execFile);

/** The kustomize-controller version whose CRD the tests install (the one test/flux builds). */
export const FLUX_KUSTOMIZE_CONTROLLER = 'github.com/fluxcd/kustomize-controller@v1.9.6';
const CRD_FILE = join('config', 'crd', 'bases', 'kustomize.toolkit.fluxcd.io_kustomizations.yaml');
const CRD_NAME = 'kustomizations.kustomize.toolkit.fluxcd.io';

/**
 * The module's directory: in the Go module cache, downloaded through the module proxy (`go mod
 * download`) when it is not there yet. KR_FLUX_MODULE_DIR names another copy.
 */
async function moduleDir(): Promise<string> {
  const given = process.env['KR_FLUX_MODULE_DIR'];
  if (given) return given;
  const { stdout } = await run('go', ['mod', 'download', '-json', FLUX_KUSTOMIZE_CONTROLLER], {
    maxBuffer: 1024 * 1024,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string; Error?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${FLUX_KUSTOMIZE_CONTROLLER} gave no directory: ${stdout}`);
  return dir;
}

/**
 * Installs Flux's Kustomization CRD (cluster-scoped, shared by every test and the parity suite)
 * unless it is there, and waits until it is Established. Several tests may race: AlreadyExists is
 * success.
 */
export async function installFluxKustomizationCrd(client: ClusterClient): Promise<void> {
  const file = join(await moduleDir(), CRD_FILE);
  await access(file);
  const crd = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  try {
    await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
  await eventually(`CRD ${CRD_NAME} to be Established`, 60_000, async () => {
    const got = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`,
    );
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });
  // Established says the API is served; the first object write can still race the handler's start.
  await eventually(`the ${CRD_NAME} API to answer`, 30_000, async () => {
    await client.request('GET', '/apis/kustomize.toolkit.fluxcd.io/v1/kustomizations?limit=1');
    return true;
  });
}

/** Flux's owner labels on an object of Kustomization `ns/name`, as kustomize-controller sets them. */
export const fluxOwnerLabels = (namespace: string, name: string): Record<string, string> => ({
  'kustomize.toolkit.fluxcd.io/name': name,
  'kustomize.toolkit.fluxcd.io/namespace': namespace,
});

export interface FluxKustomizationFixture {
  namespace: string;
  name: string;
  suspend: boolean;
  /** status.inventory.entries as Flux writes them. */
  entries: { id: string; v: string }[];
  kubeConfigSecret?: string;
}

/** Creates a Flux Kustomization and sets its status.inventory through the /status subresource. */
export async function createFluxKustomization(client: ClusterClient, f: FluxKustomizationFixture): Promise<void> {
  const base = `/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/${f.namespace}/kustomizations`;
  const created = await client.request<{ metadata: { resourceVersion: string } }>('POST', base, {
    body: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: f.name, namespace: f.namespace },
      spec: {
        interval: '10m',
        path: `./${f.name}`,
        prune: true,
        sourceRef: { kind: 'GitRepository', name: 'repo' },
        suspend: f.suspend,
        ...(f.kubeConfigSecret ? { kubeConfig: { secretRef: { name: f.kubeConfigSecret } } } : {}),
      },
    },
  });
  await client.request('PUT', `${base}/${f.name}/status`, {
    body: {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: f.name, namespace: f.namespace, resourceVersion: created.metadata.resourceVersion },
      status: { inventory: { entries: f.entries } },
    },
  });
}
