import { describe, expect, it } from 'vitest';
import { breakdownTable, cpuBreakdown, wallSpans, type CpuProfile } from '../../bench/breakdown.ts';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const marks = (...pairs: [string, number][]) => pairs.map(([name, at]) => ({ name, at }));

describe('wallSpans', () => {
  it.each([
    [
      'a CLI run cut at its marks and kustomize',
      {
        spawnedAt: 0,
        exitedAt: 1000,
        marks: marks(
          ['main', 200],
          ['reconcile', 210],
          ['Render>', 220],
          ['Render<', 700],
          ['Plan>', 720],
          ['Plan<', 730],
          ['Apply>', 730],
          ['Apply<', 900],
          ['Record>', 900],
          ['Record<', 950],
          ['reconciled', 960],
          ['reported', 970],
          ['exit', 980],
        ),
        kustomize: [{ start: 300, end: 600 }],
      },
      {
        'start-up and module load': 200,
        'flags, settings, git': 10,
        'resolve: kubeconfig, Kustomization': 10,
        'render: the build (tree copy and kustomize, or in process)': 80,
        'kustomize (child process)': 300,
        'render: YAML parse, normalise': 100,
        'discovery, lock, inventory read (after the build)': 20,
        'plan: prevalidate, inventory pending': 10,
        'between phases': 0,
        'apply: lists, proof/diff, apply requests': 170,
        'record: inventory write': 50,
        'removed Kustomizations, close': 10,
        'report rendering and output': 10,
        'exit: the event loop drains': 10,
        'exit: teardown (with --cpu-prof, writing the profile)': 20,
      },
    ],
    [
      "several Kustomizations: prefixed titles, each one's spans added up; a dry run; marks outside the run ignored",
      {
        spawnedAt: 100,
        exitedAt: 400,
        marks: marks(
          ['main', 150],
          ['[ns/a] Apply (dry run)>', 200],
          ['[ns/a] Apply (dry run)<', 250],
          ['[ns/b] Apply (dry run)>', 250],
          ['[ns/b] Apply (dry run)<', 300],
          ['Custom>', 300],
          ['exit', 500],
        ),
        kustomize: [{ start: 10, end: 90 }],
      },
      {
        'start-up and module load': 50,
        'flags, settings, git': 50,
        'apply: lists, proof/diff, apply requests': 100,
        'between phases': 0,
        Custom: 100,
      },
    ],
  ])('%s', (_, run, want) => {
    expect(Object.fromEntries(wallSpans(run))).toEqual(want);
  });
});

/** A profile of frames given as stacks (root first), one sample each, 1 ms apart from t = 0 µs. */
function profileOf(stacks: { frames: [string, string][]; at?: number }[]): CpuProfile {
  const nodes: CpuProfile['nodes'] = [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 }, children: [] },
  ];
  const samples: number[] = [];
  for (const { frames } of stacks) {
    let parent = nodes[0]!;
    for (const [functionName, url] of frames) {
      let child = nodes.find(
        (n) => parent.children!.includes(n.id) && n.callFrame.functionName === functionName && n.callFrame.url === url,
      );
      if (!child) {
        child = {
          id: nodes.length + 1,
          callFrame: { functionName, url, lineNumber: 0, columnNumber: 0 },
          children: [],
        };
        nodes.push(child);
        parent.children!.push(child.id);
      }
      parent = child;
    }
    samples.push(parent.id);
  }
  return { nodes, startTime: 0, endTime: (stacks.length + 1) * 1000, samples, timeDeltas: samples.map(() => 1000) };
}

// The "bundle" maps URL `bundle:<file>` to <file>, as a source map would.
const resolve = (url: string) => (url.startsWith('bundle:') ? url.slice('bundle:'.length) : url);
const yamlParse: [string, string] = ['parse', 'bundle:node_modules/yaml/dist/parse/parser.js'];

describe('cpuBreakdown', () => {
  it.each([
    [
      'the innermost frame of ours decides',
      [['render', 'bundle:src/reconcile/render.ts'], ['parseManifests', 'bundle:src/objects/kube.ts'], yamlParse],
      'YAML parse: kustomize output',
    ],
    [
      'an outer frame narrows it',
      [
        ['generateKustomization', 'bundle:src/kustomize/generate.ts'],
        ['parseYamlStream', 'bundle:src/objects/yaml.ts'],
        yamlParse,
      ],
      'YAML parse: source files (generated kustomization)',
    ],
    [
      'the build in process, not kustomize',
      [
        ['build', 'bundle:src/kustomize/build.ts'],
        ['buildOverlay', 'bundle:src/kustomize/overlay.ts'],
        ['applyOps', 'bundle:src/kustomize/overlay-patch.ts'],
      ],
      'build in process (plain.ts, overlay.ts)',
    ],
    [
      'the proof',
      [
        ['applyAll', 'bundle:src/ssa/apply.ts'],
        ['provenUnchanged', 'bundle:src/ssa/noop.ts'],
      ],
      'proof/diff',
    ],
    ['a library alone', [yamlParse], 'YAML parse: kustomize output'],
    [
      'Node internals alone: TLS',
      [
        ['onStreamRead', 'node:internal/stream_base_commons'],
        ['ondata', 'node:_tls_wrap'],
      ],
      'API client, HTTP, TLS, JSON',
    ],
    [
      'Node internals alone: other',
      [['processTicksAndRejections', 'node:internal/process/task_queues']],
      'other (Node internals)',
    ],
    ['garbage collection', [['(garbage collector)', '']], 'garbage collection'],
    [
      'a file read resumed outside the render window',
      [
        ['readFileHandle', 'node:internal/fs/promises'],
        ['read', ''],
      ],
      'file system, caller not in the stack: elsewhere',
    ],
  ] as [string, [string, string][], string][])('%s', (_, frames, category) => {
    const b = cpuBreakdown(profileOf([{ frames }]), resolve);
    expect(Object.fromEntries(b.byCategory)).toEqual({ [category]: 1 });
  });

  it('puts samples before main into start-up, after reconciled into the report, idle apart, file reads in render', () => {
    const ours: [string, string][] = [['copyEntries', 'bundle:src/kustomize/copy.ts']];
    const read: [string, string][] = [['readFileHandle', 'node:internal/fs/promises']];
    const b = cpuBreakdown(
      profileOf([{ frames: ours }, { frames: ours }, { frames: read }, { frames: [['(idle)', '']] }, { frames: ours }]),
      resolve,
      // Samples are at 1000, 2000, … µs.
      { mainUs: 1500, reconciledUs: 4500, beforeKustomize: [[2500, 3500]] },
    );
    expect(Object.fromEntries(b.byCategory)).toEqual({
      'start-up and module load': 1,
      'tree copy': 1,
      'file system, caller not in the stack: render before kustomize (copy, checks)': 1,
      'report rendering and output': 1,
    });
    expect(b.idleMs).toBe(1);
    expect(Object.fromEntries(b.bySelfFile)).toEqual({ 'src/kustomize/copy.ts': 3, 'node:internal/fs/promises': 1 });
  });
});

describe('breakdownTable', () => {
  it.each([
    [
      'rows in order, others after, empty rows left out, percentages of each total',
      ['b', 'a', 'unused'],
      [
        {
          title: 'no-op',
          values: new Map([
            ['a', 250],
            ['b', 750],
            ['c', 0.2],
          ]),
          total: 1000,
        },
        {
          title: 'prune',
          values: new Map([
            ['a', 1234.4],
            ['d', 4],
          ]),
          total: 2468.8,
        },
      ],
      [
        '| span | no-op | prune |',
        '|---|---:|---:|',
        '| b | 750 (75 %) | - |',
        '| a | 250 (25 %) | 1,234 (50 %) |',
        '| d | - | 4 (0.2 %) |',
        '| **total** | **1,000** | **2,469** |',
      ],
    ],
    [
      'a negative remainder',
      [],
      [{ title: 'x', values: new Map([['rest', -20]]), total: 400 }],
      ['| span | x |', '|---|---:|', '| rest | -20 (-5 %) |', '| **total** | **400** |'],
    ],
  ])('%s', (_, order, columns, lines) => {
    expect(breakdownTable('span', order, columns)).toBe(lines.join('\n'));
  });
});
