// The writes of one stage (src/ssa/write.ts): concurrent within a kind, kinds in order, a refused
// checkpoint or a failure stops them (none starts after, those in flight finish), and entries and
// log lines keep the stage's order whatever order the writes finish in. The writes and checkpoints
// are promises the test settles itself: no cluster, no timers.
import { describe, expect, it } from 'vitest';
import type { ResourceMapping } from '../../src/cluster/discovery.js';
import { sortForApply } from '../../src/objects/order.js';
import type { KubeObject } from '../../src/objects/kube.js';
import { writeStage, type Planned, type StageWriteOptions } from '../../src/ssa/write.js';

const MAPPING = {} as ResourceMapping;

function planned(kind: string, name: string, apply = true, apiVersion = 'v1'): Planned {
  const obj: KubeObject = { apiVersion, kind, metadata: { name, namespace: 'ns' } };
  const subject = `${kind}/ns/${name}`;
  return {
    obj,
    mapping: MAPPING,
    apply,
    entry: { subject, action: apply ? 'created' : 'unchanged', apiVersion, kind, namespace: 'ns', name },
  };
}

interface Deferred {
  resolve: () => void;
  reject: (err: Error) => void;
  promise: Promise<void>;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { resolve, reject, promise };
}

/** `ps` in Flux's apply order (as applyAll plans a stage). */
const inApplyOrder = (ps: Planned[]) => sortForApply(ps.map((p) => p.obj)).map((o) => ps.find((p) => p.obj === o)!);

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/**
 * A stage whose writes wait until the test ends them: `writing` are the names being written now,
 * `events` what happened in order, `finish(name)` / `fail(name)` end one write.
 */
function harness(objects: Planned[], opts: Partial<StageWriteOptions> = {}) {
  const writes = new Map<string, Deferred>();
  const events: string[] = [];
  const log: string[] = [];
  let maxInFlight = 0;
  const writing = () => [...writes.keys()];
  const run = writeStage(objects, {
    concurrency: 3,
    dryRunOnly: false,
    log: (l) => log.push(l),
    write: async (p) => {
      const d = deferred();
      writes.set(p.obj.metadata.name, d);
      maxInFlight = Math.max(maxInFlight, writes.size);
      events.push(`start ${p.obj.metadata.name}`);
      try {
        await d.promise;
        events.push(`end ${p.obj.metadata.name}`);
      } finally {
        writes.delete(p.obj.metadata.name);
      }
    },
    ...opts,
  });
  return {
    run,
    events,
    log,
    writing,
    maxInFlight: () => maxInFlight,
    finish: async (...names: string[]) => {
      for (const n of names) writes.get(n)!.resolve();
      await settle();
    },
    fail: async (name: string) => {
      writes.get(name)!.reject(new Error(`${name} apply failed (Invalid): no`));
      await settle();
    },
  };
}

describe('writeStage', () => {
  it('writes the objects of one kind concurrently, at most `concurrency` at once, and logs in order', async () => {
    const objects = ['a', 'b', 'c', 'd', 'e'].map((n) => planned('ConfigMap', n));
    const h = harness(objects);
    await settle();
    expect(h.writing()).toEqual(['a', 'b', 'c']);
    // c and b finish first: nothing is logged until a is done.
    await h.finish('c', 'b');
    expect(h.writing()).toEqual(['a', 'd', 'e']);
    expect(h.log).toEqual([]);
    await h.finish('a');
    expect(h.log).toEqual(['ConfigMap/ns/a created', 'ConfigMap/ns/b created', 'ConfigMap/ns/c created']);
    await h.finish('e', 'd');
    const out = await h.run;
    expect(h.maxInFlight()).toBe(3);
    expect(out.done.map((e) => e.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(h.log).toEqual(['a', 'b', 'c', 'd', 'e'].map((n) => `ConfigMap/ns/${n} created`));
    expect(out.failures).toEqual([]);
    expect(out.refused).toBeUndefined();
  });

  it('keeps Flux’s kind order: a kind is written once the kind before it is done', async () => {
    const objects = inApplyOrder([
      planned('Deployment', 'web', true, 'apps/v1'),
      planned('RoleBinding', 'rb', true, 'rbac.authorization.k8s.io/v1'),
      planned('ServiceAccount', 'sa1'),
      planned('ServiceAccount', 'sa2'),
      planned('Role', 'role', true, 'rbac.authorization.k8s.io/v1'),
      planned('ValidatingWebhookConfiguration', 'hook', true, 'admissionregistration.k8s.io/v1'),
    ]);
    const h = harness(objects, { concurrency: 8 });
    await settle();
    expect(h.writing()).toEqual(['sa1', 'sa2']);
    await h.finish('sa2');
    expect(h.writing()).toEqual(['sa1']);
    await h.finish('sa1');
    expect(h.writing()).toEqual(['role']);
    await h.finish('role');
    expect(h.writing()).toEqual(['rb']);
    await h.finish('rb');
    expect(h.writing()).toEqual(['web']);
    await h.finish('web');
    expect(h.writing()).toEqual(['hook']);
    await h.finish('hook');
    expect((await h.run).done.map((e) => e.name)).toEqual(['sa1', 'sa2', 'role', 'rb', 'web', 'hook']);
  });

  it('starts no write once the checkpoint refuses (a lost lock); writes in flight finish and count', async () => {
    const objects = ['a', 'b', 'c', 'd', 'e'].map((n) => planned('ConfigMap', n));
    let lost = false;
    const checkpoints: string[] = [];
    const h = harness(objects, {
      checkpoint: () => {
        checkpoints.push(lost ? 'refused' : 'passed');
        return lost ? Promise.reject(new Error('lost the lock ns/lease')) : Promise.resolve();
      },
    });
    await settle();
    expect(h.writing()).toEqual(['a', 'b', 'c']);
    lost = true;
    // a is done: its worker takes d, whose checkpoint is refused; the others take nothing more.
    await h.finish('a');
    await h.finish('b', 'c');
    const out = await h.run;
    expect(checkpoints).toEqual(['passed', 'passed', 'passed', 'refused']);
    expect(h.events).toEqual(['start a', 'start b', 'start c', 'end a', 'end b', 'end c']);
    expect(out.done.map((e) => e.name)).toEqual(['a', 'b', 'c']);
    expect((out.refused as Error).message).toBe('lost the lock ns/lease');
    expect(h.log).toEqual(['a', 'b', 'c'].map((n) => `ConfigMap/ns/${n} created`));
  });

  it('does not start a write whose checkpoint passed after another was refused', async () => {
    const objects = ['a', 'b'].map((n) => planned('ConfigMap', n));
    const gates = [deferred(), deferred()];
    let calls = 0;
    const h = harness(objects, { checkpoint: () => gates[calls++]!.promise });
    await settle();
    gates[0]!.reject(new Error('lost the lock'));
    await settle();
    gates[1]!.resolve();
    const out = await h.run;
    expect(h.events).toEqual([]);
    expect(out.done).toEqual([]);
    expect((out.refused as Error).message).toBe('lost the lock');
  });

  it('stops at a failure: writes in flight finish, none starts, later kinds are not written', async () => {
    const objects = [
      ...['a', 'b', 'c', 'd'].map((n) => planned('ConfigMap', n)),
      planned('Service', 's'),
      planned('ConfigMap', 'same', false),
    ];
    const h = harness(inApplyOrder(objects));
    await settle();
    expect(h.writing()).toEqual(['a', 'b', 'c']);
    await h.fail('a');
    expect(h.writing()).toEqual(['b', 'c']);
    await h.finish('c', 'b');
    const out = await h.run;
    expect(h.events).toEqual(['start a', 'start b', 'start c', 'end c', 'end b']);
    expect(out.done.map((e) => e.name)).toEqual(['b', 'c']);
    expect(out.failures).toEqual([{ object: objects[0]!.obj, message: 'a apply failed (Invalid): no' }]);
    expect(h.log).toEqual(['ConfigMap/ns/b created', 'ConfigMap/ns/c created']);
  });

  it('with concurrency 1 reports what the sequential writes did: the objects before the failure', async () => {
    const objects = [planned('ConfigMap', 'a'), planned('ConfigMap', 'b', false), planned('ConfigMap', 'c')];
    objects.push(planned('ConfigMap', 'd', false));
    const h = harness(objects, { concurrency: 1 });
    await settle();
    await h.finish('a');
    expect(h.writing()).toEqual(['c']);
    await h.fail('c');
    const out = await h.run;
    expect(out.done.map((e) => e.name)).toEqual(['a', 'b']);
    expect(out.failures.map((f) => f.object.metadata.name)).toEqual(['c']);
    expect(h.log).toEqual(['ConfigMap/ns/a created', 'ConfigMap/ns/b unchanged']);
  });

  it('lists every failure of the writes in flight, in the stage’s order', async () => {
    const objects = ['a', 'b', 'c'].map((n) => planned('ConfigMap', n));
    const h = harness(objects);
    await settle();
    await h.fail('c');
    await h.fail('a');
    await h.finish('b');
    const out = await h.run;
    expect(out.failures.map((f) => f.message)).toEqual([
      'a apply failed (Invalid): no',
      'c apply failed (Invalid): no',
    ]);
    expect(out.done.map((e) => e.name)).toEqual(['b']);
    expect(h.log).toEqual(['ConfigMap/ns/b created']);
  });

  it('writes nothing and passes no checkpoint for objects without a write, or in a plan only', async () => {
    let checkpoints = 0;
    const checkpoint = () => {
      checkpoints++;
      return Promise.resolve();
    };
    const unchanged = ['a', 'b'].map((n) => planned('ConfigMap', n, false));
    const quiet = harness(unchanged, { checkpoint });
    expect((await quiet.run).done.map((e) => e.name)).toEqual(['a', 'b']);
    const preview = harness(
      ['a', 'b'].map((n) => planned('ConfigMap', n)),
      { checkpoint, dryRunOnly: true },
    );
    expect((await preview.run).done.map((e) => e.action)).toEqual(['created', 'created']);
    expect(preview.log).toEqual(['ConfigMap/ns/a created', 'ConfigMap/ns/b created']);
    expect([...quiet.events, ...preview.events]).toEqual([]);
    expect(checkpoints).toBe(0);
  });

  it('names the immutable fields of a recreated object in its log line', async () => {
    const p = { ...planned('Job', 'migrate', true, 'batch/v1'), recreate: ['spec.template'] };
    const h = harness([p]);
    await settle();
    await h.finish('migrate');
    await h.run;
    expect(h.log).toEqual(['Job/ns/migrate created (recreated: immutable field spec.template changed)']);
  });
});
