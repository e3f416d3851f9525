// The run's budget for extracted files (src/source/budget.ts): one per run, shared by every OCI
// layer extraction, Bucket download and ArtifactGenerator copy or Extract, so that one small tarball
// extracted again and again cannot fill the disk.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArtifactGeneratorDef, CopyOperation, OCIRepositoryDef } from '../../src/flux/source-defs.js';
import { generateArtifact } from '../../src/source/artifact.js';
import { ExtractBudget, RUN_MAX_BYTES, RUN_MAX_FILES } from '../../src/source/budget.js';
import { fetchOCIRepository } from '../../src/source/oci.js';
import { extractTarGz } from '../../src/source/tar.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const MiB = 1024 * 1024;

describe('ExtractBudget', () => {
  it('defaults to 256 MiB in 20,000 files', () => {
    const b = new ExtractBudget();
    expect([b.maxBytes, b.maxFiles]).toEqual([256 * MiB, 20_000]);
    expect([RUN_MAX_BYTES, RUN_MAX_FILES]).toEqual([256 * MiB, 20_000]);
  });

  it.each<[string, [number, number][], string | undefined, { bytes: number; files: number }]>([
    [
      'within both limits',
      [
        [MiB, 1],
        [MiB, 1],
      ],
      undefined,
      { bytes: 2 * MiB, files: 2 },
    ],
    ['exactly the limits', [[3 * MiB, 3]], undefined, { bytes: 3 * MiB, files: 3 }],
    [
      'one byte too many',
      [
        [3 * MiB, 1],
        [1, 0],
      ],
      'would pass the 3 MiB)',
      { bytes: 3 * MiB, files: 1 },
    ],
    [
      'one file too many',
      [
        [0, 3],
        [0, 1],
      ],
      'would pass the 3 files)',
      { bytes: 0, files: 3 },
    ],
  ])('%s', (_, takes, error, spent) => {
    const b = new ExtractBudget(3 * MiB, 3);
    const run = () => {
      for (const [bytes, files] of takes) b.take(bytes, files, 'Bucket ns/b, object "k"');
    };
    if (error === undefined) run();
    else expect(run).toThrow(error);
    // A refused take takes nothing.
    expect(b.spent).toEqual(spent);
  });

  it('says what is spent, across all sources, and what would pass it', () => {
    const b = new ExtractBudget();
    expect(() => {
      b.take(RUN_MAX_BYTES + 1, 1, 'ArtifactGenerator ns/name, Extract of @src/x.tgz');
    }).toThrow(
      "the run's budget for extracted files is spent: 256 MiB in 20,000 files at most across all sources (ArtifactGenerator ns/name, Extract of @src/x.tgz would pass the 256 MiB)",
    );
  });

  it('check takes nothing', () => {
    const b = new ExtractBudget(10, 1);
    b.check(10, 1, 'x');
    expect(() => {
      b.check(11, 0, 'x');
    }).toThrow('would pass the 10 bytes');
    expect(b.spent).toEqual({ bytes: 0, files: 0 });
  });
});

let dir: string;
let tarball: Buffer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kr-budget-test-'));
  // A small tarball (a few KiB) holding a 1 MiB file of zeros.
  mkdirSync(join(dir, 'content'));
  writeFileSync(join(dir, 'content', 'zero'), Buffer.alloc(MiB));
  mkdirSync(join(dir, 'src'));
  execFileSync('tar', ['-czf', join(dir, 'src', 'z.tgz'), '-C', join(dir, 'content'), 'zero']);
  tarball = readFileSync(join(dir, 'src', 'z.tgz'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const into = (name: string) => {
  const out = join(dir, 'out', name);
  mkdirSync(out, { recursive: true });
  return out;
};

describe('extractTarGz under the run budget', () => {
  it('four extractions of one tarball under one budget of 3 MiB: the fourth is refused', async () => {
    expect(tarball.length).toBeLessThan(64 * 1024);
    const budget = new ExtractBudget(3 * MiB);
    const spend = (bytes: number, files: number) => {
      budget.take(bytes, files, 'OCIRepository ns/o, layer sha256:x');
    };
    for (const n of [1, 2, 3]) expect(await extractTarGz(tarball, into(`one-${n}`), { spend })).toEqual(['zero']);
    await expect(extractTarGz(tarball, into('one-4'), { spend })).rejects.toThrow(
      "the run's budget for extracted files is spent: 3 MiB in 20,000 files",
    );
    expect(budget.spent).toEqual({ bytes: 3 * MiB, files: 3 });
  });

  it('under separate budgets each extraction passes', async () => {
    for (const n of [1, 2, 3, 4]) {
      const budget = new ExtractBudget(3 * MiB);
      const spend = (bytes: number, files: number) => {
        budget.take(bytes, files, 'x');
      };
      expect(await extractTarGz(tarball, into(`sep-${n}`), { spend })).toEqual(['zero']);
    }
  });
});

describe('generateArtifact under the run budget', () => {
  const op = (from: string, to: string, strategy: CopyOperation['strategy']): CopyOperation => ({
    from,
    to,
    exclude: [],
    strategy,
  });
  const generator = (copy: CopyOperation[]): ArtifactGeneratorDef => ({
    kind: 'ArtifactGenerator',
    namespace: 'ns',
    name: 'unpack',
    file: 'clusters/gen.yaml',
    sources: [{ alias: 'src', kind: 'GitRepository', name: 'a', namespace: 'ns' }],
    artifacts: [{ name: 'out', copy }],
  });
  const inputs = () => ({ src: { root: join(dir, 'src'), revision: 'r' } });
  const extracts = [1, 2, 3, 4].map((n) => op('@src/z.tgz', `@artifact/x${n}/`, 'Extract'));

  it('four Extracts of one tarball under a budget of 2.5 MiB: the third is refused, naming it', async () => {
    const budget = new ExtractBudget(2.5 * MiB);
    await expect(generateArtifact(generator(extracts), 'out', inputs(), budget)).rejects.toThrow(
      "copy from '@src/z.tgz' to '@artifact/x3/' failed: failed to extract tarball 'z.tgz' to 'x3': the run's budget for extracted files is spent: 2,621,440 bytes in 20,000 files at most across all sources (ArtifactGenerator ns/unpack, Extract of @src/z.tgz would pass the 2,621,440 bytes)",
    );
  });

  it('copies are taken from the budget too, and a budget is shared between artifacts', async () => {
    const budget = new ExtractBudget(5 * MiB);
    const first = await generateArtifact(generator(extracts), 'out', inputs(), budget);
    await first.cleanup();
    expect(budget.spent).toEqual({ bytes: 4 * MiB, files: 4 });
    const copies = [op('@src/z.tgz', '@artifact/a.tgz', 'Overwrite'), op('@src/z.tgz', '@artifact/b.tgz', 'Overwrite')];
    const small = new ExtractBudget(4 * MiB + tarball.length, 5);
    await expect(generateArtifact(generator([...extracts, ...copies]), 'out', inputs(), small)).rejects.toThrow(
      '(ArtifactGenerator ns/unpack, copy of @src/z.tgz would pass the',
    );
  });

  it('without a budget given, each artifact has its own (the default)', async () => {
    const made = await generateArtifact(generator(extracts), 'out', inputs());
    await made.cleanup();
    expect(made.revision).toMatch(/^latest@sha256:/);
  });
});

describe('fetchOCIRepository under the run budget', () => {
  it('the same layer pulled twice under a budget of 1.5 MiB: the second extraction is refused, naming it', async () => {
    const digest = `sha256:${createHash('sha256').update(tarball).digest('hex')}`;
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.cncf.flux.config.v1+json', digest, size: 1 },
      layers: [{ mediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip', digest, size: tarball.length }],
    });
    const server = createServer((req, res) => {
      if (req.url === '/v2/x/manifests/latest') {
        res.setHeader('content-type', 'application/vnd.oci.image.manifest.v1+json');
        res.end(manifest);
      } else if (req.url === `/v2/x/blobs/${digest}`) res.end(tarball);
      else {
        res.statusCode = 404;
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const def: OCIRepositoryDef = {
        kind: 'OCIRepository',
        namespace: 'ns',
        name: 'o',
        file: 'clusters/o.yaml',
        url: `oci://127.0.0.1:${(server.address() as AddressInfo).port}/x`,
        insecure: true,
      };
      const budget = new ExtractBudget(1.5 * MiB);
      const opts = { credentials: {}, secret: () => undefined, budget };
      const first = await fetchOCIRepository(def, opts);
      expect(readFileSync(join(first.root, 'zero')).length).toBe(MiB);
      await first.cleanup();
      await expect(fetchOCIRepository(def, opts)).rejects.toThrow(
        `failed to extract layer contents from artifact: the run's budget for extracted files is spent: 1,572,864 bytes in 20,000 files at most across all sources (OCIRepository ns/o, layer ${digest} would pass the 1,572,864 bytes)`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
