import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../../src/cluster/client.js';
import {
  UnservedKindError,
  isUnservedKind,
  mappingKey,
  type Discovery,
  type ResourceMapping,
} from '../../src/cluster/discovery.js';
import { definedKinds, unservedMessage } from '../../src/kstatus/unserved.js';
import { healthFailure, timeoutSource, type HealthTarget } from '../../src/kstatus/wait.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { ResourceManager } from '../../src/ssa/manager.js';
import type { Clock } from '../../src/util/poll.js';

/** A clock whose sleeps only move its time on. */
function fakeClock(): Clock & { slept: number } {
  let t = 0;
  const clock = {
    slept: 0,
    now: () => t,
    sleep: (ms: number) => {
      t += ms;
      clock.slept += ms;
      return Promise.resolve();
    },
  };
  return clock;
}

/** Discovery that serves the kinds `served` says it does (asked on every mapping, as a re-read would). */
function fakeDiscovery(served: (apiVersion: string, kind: string) => boolean): Discovery {
  return {
    mapping: (apiVersion: string, kind: string): Promise<ResourceMapping> => {
      if (!served(apiVersion, kind)) return Promise.reject(new UnservedKindError(apiVersion, kind));
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
      return Promise.resolve({
        group: group ?? '',
        version: version ?? '',
        kind,
        resource: `${kind.toLowerCase()}s`,
        namespaced: true,
      });
    },
  } as unknown as Discovery;
}

/** A client whose every GET answers an object with Ready=True (Current). */
const readyClient = {
  request: () =>
    Promise.resolve({
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'x', generation: 1 },
      status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'Ok', message: 'ok' }] },
    }),
} as unknown as ClusterClient;

/** A manager over `client` and `discovery` reading `concurrency` targets at once, its lines to `log`. */
const managerOf = (
  client: ClusterClient,
  discovery: Discovery,
  concurrency: number,
  log: (line: string) => void = () => undefined,
) => new ResourceManager(client, discovery, { fieldManager: 'health-unserved-test', concurrency, log });

const ceph: HealthTarget = {
  subject: 'CephCluster/rook-ceph/main',
  apiVersion: 'ceph.rook.io/v1',
  kind: 'CephCluster',
  name: 'main',
  namespace: 'rook-ceph',
  origin: 'spec.healthChecks[0]',
};

describe('a health target of a kind the server does not serve', () => {
  it('fails the wait at the first look, naming the object, the kind and what to do', async () => {
    const clock = fakeClock();
    const log: string[] = [];
    const outcome = await managerOf(
      readyClient,
      fakeDiscovery(() => false),
      2,
      (l) => log.push(l),
    ).wait([ceph], { timeoutMs: 59 * 60_000 + 30_000, clock });
    expect(clock.slept).toBe(0);
    expect(outcome).toEqual({
      ok: false,
      timedOut: false,
      results: [
        {
          subject: ceph.subject,
          status: 'Failed',
          message: unservedMessage('ceph.rook.io/v1', 'CephCluster', 'spec.healthChecks[0]'),
        },
      ],
    });
    expect(healthFailure(outcome, 0)).toBe(
      "health check failed: 1 object(s) Failed:\n  CephCluster/rook-ceph/main status: 'Failed': " +
        'the server has no resource for kind CephCluster in ceph.rook.io/v1: install its CustomResourceDefinition first ' +
        '(e.g. in a Kustomization this one dependsOn), or remove spec.healthChecks[0]',
    );
    expect(log).toHaveLength(1);
  });

  it.each([
    ['spec.wait', 'leave it out of the wait (spec.wait: false, with spec.healthChecks)'],
    ['spec.healthChecks[3]', 'remove spec.healthChecks[3]'],
    [undefined, 'remove its health check'],
  ])('says what to do for a target from %s', (origin, tail) => {
    expect(unservedMessage('a.example.com/v1', 'A', origin)).toMatch(
      new RegExp(`, or ${tail.replace(/[()[\]]/g, '\\$&')}$`),
    );
  });

  it('waits for a kind whose CRD this run applied until discovery serves it', async () => {
    const clock = fakeClock();
    let looks = 0;
    const log: string[] = [];
    const outcome = await managerOf(
      readyClient,
      fakeDiscovery(() => ++looks > 3),
      2,
      (l) => log.push(l),
    ).wait([ceph], {
      timeoutMs: 10 * 60_000,
      intervalMs: 1000,
      clock,
      definedKinds: new Set([mappingKey('ceph.rook.io/v1', 'CephCluster')]),
    });
    expect(outcome.ok).toBe(true);
    expect(clock.slept).toBe(3000);
    expect(log[0]).toBe(
      `${ceph.subject}: Unknown (the server does not serve kind CephCluster in ceph.rook.io/v1 yet; this run applied its CustomResourceDefinition)`,
    );
  });

  it('fails a kind whose CRD this run applied after the grace, not the timeout, when it is never served', async () => {
    const clock = fakeClock();
    const outcome = await managerOf(
      readyClient,
      fakeDiscovery(() => false),
      2,
    ).wait([ceph], {
      timeoutMs: 10 * 60_000,
      intervalMs: 1000,
      clock,
      definedKinds: new Set([mappingKey('ceph.rook.io/v1', 'CephCluster')]),
    });
    expect(outcome.timedOut).toBe(false);
    expect(outcome.results[0]?.status).toBe('Failed');
    expect(clock.slept).toBe(30_000);
  });

  it('does not fail other errors of discovery at once (they stay Unknown)', async () => {
    const clock = fakeClock();
    const discovery = {
      mapping: () => Promise.reject(new Error('forbidden')),
    } as unknown as Discovery;
    const outcome = await managerOf(readyClient, discovery, 1).wait([ceph], {
      timeoutMs: 5000,
      intervalMs: 1000,
      clock,
    });
    expect(outcome).toEqual({
      ok: false,
      timedOut: true,
      results: [{ subject: ceph.subject, status: 'Unknown', message: 'forbidden' }],
    });
  });
});

describe('UnservedKindError', () => {
  it('keeps the message callers match by text', () => {
    const err = new UnservedKindError('ceph.rook.io/v1', 'CephCluster');
    expect(err.message).toBe(
      'the server has no resource for kind CephCluster in ceph.rook.io/v1: is its CustomResourceDefinition installed, and is the apiVersion right?',
    );
    expect(/has no resource for kind/.test(err.message)).toBe(true);
    expect(err).toBeInstanceOf(Error);
    expect(isUnservedKind(err)).toBe(true);
    expect(isUnservedKind(new Error(err.message))).toBe(false);
  });
});

describe('definedKinds', () => {
  it('lists the served versions of the CRDs among the objects', () => {
    const crd = (group: string, kind: string, versions: object[]): KubeObject => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${kind.toLowerCase()}s.${group}` },
      spec: { group, names: { kind }, versions },
    });
    const objects: KubeObject[] = [
      crd('ceph.rook.io', 'CephCluster', [
        { name: 'v1', served: true },
        { name: 'v1beta1', served: false },
      ]),
      crd('example.com', 'Widget', [{ name: 'v2' }]),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
      // Not a CRD of apiextensions: ignored.
      {
        apiVersion: 'example.com/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'x' },
        spec: { group: 'g', names: { kind: 'K' }, versions: [{ name: 'v1' }] },
      },
    ];
    expect([...definedKinds(objects)].sort()).toEqual(['ceph.rook.io/v1/CephCluster', 'example.com/v2/Widget']);
  });
});

describe('timeoutSource', () => {
  const s = 1000;
  const m = 60 * s;
  it.each([
    [59 * m + 30 * s, 60 * m, 59 * m + 30 * s, 'spec.timeout, default: spec.interval 1h0m0s minus 30s'],
    [10 * m, 60 * m, 59 * m + 30 * s, 'spec.timeout'],
    [30 * s, 45 * s, 30 * s, 'spec.timeout, default: spec.interval 45s minus 30s, at least 30s'],
    [5 * m, undefined, 5 * m, 'input timeout, default: 5m0s'],
    [2 * m, undefined, 5 * m, 'input timeout'],
  ])('%d ms with interval %s and default %d: %s', (timeout, interval, fallback, text) => {
    expect(timeoutSource(timeout, interval, fallback)).toBe(text);
  });
});
