// Pulling OCIRepository artifacts (src/source/oci.ts) from a real OCI registry: the CNCF distribution
// registry built by test/registry/build.sh, on loopback, with artifacts pushed as `flux push artifact`
// pushes them (helpers/registry.ts). By tag, by semver with its filter, by digest, `latest` by
// default; layerSelector and its copy operation; spec.ignore; auth through a ghcr.io-like token
// front with a login from the input, from a dockerconfigjson Secret, and without one; and what is
// refused: a missing tag, an image index, a layer whose bytes do not match its digest, a registry
// that does not answer. No cluster is needed.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OCIRepositoryDef } from '../../src/flux/source-defs.js';
import { fetchOCIRepository, type OciFetchOptions } from '../../src/source/oci.js';
import {
  FLUX_CONTENT,
  OCI_MANIFEST,
  pushFluxArtifact,
  putManifest,
  startRegistry,
  tarGz,
  type TestRegistry,
} from '../helpers/registry.js';

let plain: TestRegistry;
let guarded: TestRegistry;
/** Those started, for afterAll (a failed start leaves the other variables unset). */
const started: TestRegistry[] = [];
let work = '';
const digests: Record<string, string> = {};
const LOGIN = { username: 'octocat', password: 'ghp_test_registry_password' };

/** A directory holding `files`, for pushing. */
async function tree(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(work, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const app = (version: string) => ({
  'kustomization.yaml': 'resources:\n  - configmap.yaml\n',
  'configmap.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  version: "${version}"\n`,
  'docs/README.md': `# app ${version}\n`,
});

function def(registry: TestRegistry, repo: string, extra: Partial<OCIRepositoryDef> = {}): OCIRepositoryDef {
  return {
    kind: 'OCIRepository',
    namespace: 'flux-system',
    name: repo.replace(/\//g, '-'),
    file: 'clusters/sources.yaml',
    url: `oci://${registry.host}/${repo}`,
    insecure: true,
    ...extra,
  };
}

function options(extra: Partial<OciFetchOptions> = {}): OciFetchOptions & { masked: string[]; logged: string[] } {
  const masked: string[] = [];
  const logged: string[] = [];
  return {
    credentials: {},
    secret: (v) => masked.push(v),
    log: (l) => logged.push(l),
    timeoutMs: 30_000,
    ...extra,
    masked,
    logged,
  };
}

/** The ConfigMap's version in a fetched tree: proves which artifact was extracted. */
async function versionIn(root: string): Promise<string> {
  return /version: "([^"]+)"/.exec(await readFile(join(root, 'configmap.yaml'), 'utf8'))![1]!;
}

const ociTemps = async () => (await readdir(tmpdir())).filter((n) => n.startsWith('kr-oci-pull-')).sort();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'kr-oci-test-'));
  plain = await startRegistry();
  started.push(plain);
  guarded = await startRegistry({ auth: { logins: [LOGIN], service: 'ghcr-like' } });
  started.push(guarded);
  for (const v of ['1.0.0', '1.1.0', '1.2.0-rc.1', '2.0.0-rc.1', '2.0.0-beta.1', 'latest', 'main-0a1b2c']) {
    digests[v] = await pushFluxArtifact(plain.registryHost, 'apps/podinfo', v, await tree(`podinfo-${v}`, app(v)));
  }
  digests['private'] = await pushFluxArtifact(
    guarded.registryHost,
    'org/private',
    'v1',
    await tree('private', app('private')),
  );
});

afterAll(async () => {
  for (const r of started) await r.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('OCIRepository from a real registry', () => {
  it.each<[string, OCIRepositoryDef['ref'], string, (d: Record<string, string>) => string]>([
    ['a tag', { tag: '1.0.0' }, '1.0.0', (d) => `1.0.0@${d['1.0.0']}`],
    ['no ref: latest, as Flux defaults', undefined, 'latest', (d) => `latest@${d['latest']}`],
    ['semver: the highest release in range', { semver: '>=1.0.0' }, '1.1.0', (d) => `1.1.0@${d['1.1.0']}`],
    ['semver over a tag', { semver: '~1.0', tag: '1.1.0' }, '1.0.0', (d) => `1.0.0@${d['1.0.0']}`],
    [
      'semver with a filter: only rc tags',
      { semver: '>=1.0.0-0', semverFilter: '.*-rc.*' },
      '2.0.0-rc.1',
      (d) => `2.0.0-rc.1@${d['2.0.0-rc.1']}`,
    ],
    [
      'semver with a filter that leaves out the highest',
      { semver: '>=1.0.0-0', semverFilter: '^1\\.' },
      '1.2.0-rc.1',
      (d) => `1.2.0-rc.1@${d['1.2.0-rc.1']}`,
    ],
    ['a digest, over a tag: the digest alone', { tag: '1.1.0', digest: '' }, '1.0.0', (d) => d['1.0.0']!],
  ])('by %s: the right content, at the revision Flux names', async (_, ref, version, revision) => {
    const r = ref?.digest === '' ? { ...ref, digest: digests['1.0.0']! } : ref;
    const opts = options();
    const got = await fetchOCIRepository(def(plain, 'apps/podinfo', r ? { ref: r } : {}), opts);
    try {
      expect(got.revision).toBe(revision(digests));
      expect(got.revision).toMatch(/^(?:[\w.-]+@)?sha256:[a-f0-9]{64}$/);
      expect(await versionIn(got.root)).toBe(version);
      expect(await readFile(join(got.root, 'docs/README.md'), 'utf8')).toBe(`# app ${version}\n`);
      expect((await readdir(got.root)).sort()).toEqual(['configmap.yaml', 'docs', 'kustomization.yaml']);
      expect(got.filtered).toBe(true);
      expect(opts.logged.some((l) => l.includes(`pulled ${got.revision}`))).toBe(true);
    } finally {
      await got.cleanup();
    }
    expect(existsSync(got.root)).toBe(false);
  });

  it('the manifest digest is the registry’s and the one pushed (Docker-Content-Digest)', async () => {
    const res = await fetch(`http://${plain.registryHost}/v2/apps/podinfo/manifests/1.0.0`, {
      method: 'HEAD',
      headers: { accept: OCI_MANIFEST },
    });
    expect(res.headers.get('docker-content-digest')).toBe(digests['1.0.0']);
  });

  it('layerSelector: the first layer of the media type, else the first layer; copy keeps Flux’s no-ignore rule', async () => {
    const other = await tarGz(await tree('other-layer', { 'configmap.yaml': 'data:\n  version: "other"\n' }));
    const content = await tarGz(await tree('content-layer', { ...app('content'), '.sourceignore': 'docs/\n' }));
    await pushFluxArtifact(plain.registryHost, 'apps/layers', 'v1', '', {
      layers: [
        { mediaType: 'application/vnd.example.other.v1.tar+gzip', data: other },
        { mediaType: FLUX_CONTENT, data: content },
      ],
    });
    const first = await fetchOCIRepository(def(plain, 'apps/layers', { ref: { tag: 'v1' } }), options());
    const selected = await fetchOCIRepository(
      def(plain, 'apps/layers', {
        ref: { tag: 'v1' },
        layerSelector: { mediaType: FLUX_CONTENT },
        ignore: '*.md\n!keep.md',
      }),
      options(),
    );
    const copied = await fetchOCIRepository(
      def(plain, 'apps/layers', {
        ref: { tag: 'v1' },
        layerSelector: { mediaType: FLUX_CONTENT, operation: 'copy' },
        ignore: '*.md',
      }),
      options(),
    );
    try {
      expect(await versionIn(first.root)).toBe('other');
      expect(await versionIn(selected.root)).toBe('content');
      expect(selected.revision).toBe(first.revision);
      // extract: spec.ignore after the artifact's own .sourceignore, for the build to honour.
      expect(await readFile(join(selected.root, '.sourceignore'), 'utf8')).toBe('docs/\n\n*.md\n!keep.md\n');
      expect(selected.filtered).toBe(true);
      // copy: the layer as it is; spec.ignore is not applied.
      expect(await versionIn(copied.root)).toBe('content');
      expect(await readFile(join(copied.root, '.sourceignore'), 'utf8')).toBe('docs/\n');
      expect(copied.filtered).toBe(false);
    } finally {
      await Promise.all([first.cleanup(), selected.cleanup(), copied.cleanup()]);
    }
    await expect(
      fetchOCIRepository(
        def(plain, 'apps/layers', { ref: { tag: 'v1' }, layerSelector: { mediaType: 'application/x-none' } }),
        options(),
      ),
    ).rejects.toThrow("failed to find layer with media type 'application/x-none' in artifact");
  });

  it('fails naming the OCIRepository, its file, the URL and the ref, for a missing tag, a semver without match, an unknown repository', async () => {
    const url = `oci://${plain.host}/apps/podinfo`;
    await expect(fetchOCIRepository(def(plain, 'apps/podinfo', { ref: { tag: 'nope' } }), options())).rejects.toThrow(
      `fetching OCIRepository flux-system/apps-podinfo (clusters/sources.yaml): ${url} at tag nope failed: the manifest of tag "nope": HTTP 404: manifest unknown (MANIFEST_UNKNOWN)`,
    );
    await expect(
      fetchOCIRepository(def(plain, 'apps/podinfo', { ref: { semver: '>=9.0.0' } }), options()),
    ).rejects.toThrow(`${url} at semver >=9.0.0 failed: no match found for semver: >=9.0.0 (tags: `);
    await expect(
      fetchOCIRepository(def(plain, 'apps/podinfo', { ref: { digest: `sha256:${'0'.repeat(64)}` } }), options()),
    ).rejects.toThrow(`at digest sha256:${'0'.repeat(64)} failed: the manifest sha256:${'0'.repeat(64)}: HTTP 404`);
    await expect(fetchOCIRepository(def(plain, 'apps/unknown', { ref: { semver: '*' } }), options())).rejects.toThrow(
      'listing the tags: HTTP 404: repository name not known to registry (NAME_UNKNOWN)',
    );
  });

  it('refuses an image index, clearly', async () => {
    const d = digests['1.0.0']!;
    const size = (await (await fetch(`http://${plain.registryHost}/v2/apps/podinfo/manifests/${d}`)).arrayBuffer())
      .byteLength;
    await putManifest(
      plain.registryHost,
      'apps/podinfo',
      'multi',
      {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [{ mediaType: OCI_MANIFEST, digest: d, size, platform: { os: 'linux', architecture: 'amd64' } }],
      },
      'application/vnd.oci.image.index.v1+json',
    );
    await expect(fetchOCIRepository(def(plain, 'apps/podinfo', { ref: { tag: 'multi' } }), options())).rejects.toThrow(
      'is an image index (application/vnd.oci.image.index.v1+json), not a single manifest',
    );
  });

  it('refuses a layer that is not gzip, and an archive entry escaping the root, leaving no directory behind', async () => {
    const before = await ociTemps();
    await pushFluxArtifact(plain.registryHost, 'apps/bad', 'plain-tar', '', {
      layers: [{ mediaType: FLUX_CONTENT, data: Buffer.alloc(1024) }],
    });
    await expect(fetchOCIRepository(def(plain, 'apps/bad', { ref: { tag: 'plain-tar' } }), options())).rejects.toThrow(
      'is not gzip-compressed: Flux requires tar+gzip',
    );
    const evil = Buffer.alloc(512);
    evil.write('../../escaped.yaml', 0);
    evil.write('0000644\0', 100);
    evil.write('00000000004\0', 124);
    evil.write('0', 156);
    evil.write('ustar\x0000', 257);
    evil.fill(0x20, 148, 156);
    evil.write(
      `${evil
        .reduce((a, b) => a + b, 0)
        .toString(8)
        .padStart(6, '0')}\0 `,
      148,
    );
    const tar = Buffer.concat([evil, Buffer.from('evil'), Buffer.alloc(508 + 1024)]);
    await pushFluxArtifact(plain.registryHost, 'apps/bad', 'escape', '', {
      layers: [{ mediaType: FLUX_CONTENT, data: gzipSync(tar) }],
    });
    await expect(fetchOCIRepository(def(plain, 'apps/bad', { ref: { tag: 'escape' } }), options())).rejects.toThrow(
      'failed to extract layer contents from artifact: the archive entry "../../escaped.yaml" is refused',
    );
    expect(existsSync(join(tmpdir(), 'escaped.yaml'))).toBe(false);
    expect(await ociTemps()).toEqual(before);
  });

  it('without spec.insecure, speaks https (which this plain-HTTP registry does not)', async () => {
    const err = await fetchOCIRepository(
      def(plain, 'apps/podinfo', { insecure: undefined, ref: { tag: '1.0.0' } }),
      options(),
    ).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(`https://${plain.host}/v2/apps/podinfo/manifests/1.0.0`);
  });
});

describe('OCIRepository behind a ghcr.io-like token service', () => {
  it('with a login from the registry-credentials input: a token for the repository, and everything masked', async () => {
    const opts = options({ credentials: { [guarded.host]: LOGIN } });
    const before = guarded.tokenRequests.length;
    const got = await fetchOCIRepository(def(guarded, 'org/private', { ref: { tag: 'v1' } }), opts);
    try {
      expect(got.revision).toBe(`v1@${digests['private']}`);
      expect(await versionIn(got.root)).toBe('private');
    } finally {
      await got.cleanup();
    }
    const asked = guarded.tokenRequests.slice(before);
    expect(asked).toEqual([{ user: 'octocat', scope: 'repository:org/private:pull', service: 'ghcr-like' }]);
    expect(opts.masked).toContain(LOGIN.password);
    expect(opts.masked).toContain(Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString('base64'));
    // The bearer token handed out is masked too: a value that is neither of those.
    const basic = Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString('base64');
    expect(opts.masked.filter((m) => m !== LOGIN.password && m !== basic)).toHaveLength(1);
  });

  it('with a kubernetes.io/dockerconfigjson Secret that spec.secretRef names, read from its namespace', async () => {
    const read: string[] = [];
    const auth = Buffer.from(`${LOGIN.username}:${LOGIN.password}`).toString('base64');
    const opts = options({
      readSecret: (ns, name) => {
        read.push(`${ns}/${name}`);
        return Promise.resolve({
          '.dockerconfigjson': JSON.stringify({ auths: { [`http://${guarded.host}`]: { auth } } }),
        });
      },
    });
    const got = await fetchOCIRepository(
      def(guarded, 'org/private', { ref: { semver: '1.x' }, secretRef: 'regcred', namespace: 'apps' }),
      opts,
    ).catch((e: unknown) => e as Error);
    // v1 is a semver tag (1.0.0 leniently): semver through the token service too.
    expect(got).not.toBeInstanceOf(Error);
    const fetched = got as Awaited<ReturnType<typeof fetchOCIRepository>>;
    try {
      expect(fetched.revision).toBe(`v1@${digests['private']}`);
      expect(await versionIn(fetched.root)).toBe('private');
    } finally {
      await fetched.cleanup();
    }
    expect(read).toEqual(['apps/regcred']);
    expect(opts.masked).toContain(auth);
    expect(opts.masked).toContain(LOGIN.password);
  });

  it.each<[string, Partial<OCIRepositoryDef>, Partial<OciFetchOptions>, string[]]>([
    [
      'without any login',
      {},
      {},
      [
        'failed: the token service',
        'HTTP 401: authentication required (UNAUTHORIZED)',
        'no login for 127.0.0.1:',
        'in the registry-credentials input, no spec.secretRef)',
      ],
    ],
    [
      'with a wrong login',
      {},
      { credentials: { HOST: { username: 'octocat', password: 'wrong' } } },
      [
        'HTTP 403: requested access to the resource is denied (DENIED)',
        'the login from the registry-credentials input for 127.0.0.1:',
        'was refused)',
      ],
    ],
    [
      'with a Secret for another registry',
      { secretRef: 'regcred' },
      {
        readSecret: () =>
          Promise.resolve({
            '.dockerconfigjson': JSON.stringify({ auths: { 'quay.io': { username: 'a', password: 'b' } } }),
          }),
      },
      ['HTTP 401', 'spec.secretRef regcred has no auths entry for 127.0.0.1:'],
    ],
    [
      'with a Secret that cannot be read',
      { secretRef: 'regcred' },
      { readSecret: () => Promise.reject(new Error('secrets "regcred" is forbidden')) },
      ['HTTP 401', 'spec.secretRef regcred could not be used: secrets "regcred" is forbidden'],
    ],
  ])('%s: fails naming the missing or refused login', async (_, extra, optsExtra, messages) => {
    const credentials = Object.fromEntries(
      Object.entries(optsExtra.credentials ?? {}).map(([k, v]) => [k === 'HOST' ? guarded.host : k, v]),
    );
    const err = await fetchOCIRepository(
      def(guarded, 'org/private', { ref: { tag: 'v1' }, ...extra }),
      options({ ...optsExtra, credentials }),
    ).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toContain(
      `fetching OCIRepository flux-system/org-private (clusters/sources.yaml): oci://${guarded.host}/org/private at tag v1 failed`,
    );
    for (const m of messages) expect(message).toContain(m);
  });
});

describe('OCIRepository against a registry that misbehaves', () => {
  let server: http.Server;
  let host = '';
  const layer = gzipSync(Buffer.alloc(1024));
  const layerDigest = `sha256:${createHash('sha256').update(layer).digest('hex')}`;
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: 'application/vnd.cncf.flux.config.v1+json', digest: layerDigest, size: 2 },
      layers: [{ mediaType: FLUX_CONTENT, digest: layerDigest, size: layer.length }],
    }),
  );
  const manifestDigest = `sha256:${createHash('sha256').update(manifest).digest('hex')}`;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/v2/stall/manifests/latest') return; // never answers
      if (req.url?.startsWith('/v2/tampered/manifests/')) {
        res.writeHead(200, { 'content-type': OCI_MANIFEST }).end(manifest);
        return;
      }
      if (req.url === `/v2/tampered/blobs/${layerDigest}`) {
        const bad = Buffer.from(layer);
        bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
        res.writeHead(200).end(bad);
        return;
      }
      if (req.url?.startsWith('/v2/lying/manifests/')) {
        res
          .writeHead(200, { 'content-type': OCI_MANIFEST, 'docker-content-digest': `sha256:${'1'.repeat(64)}` })
          .end(manifest);
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => {
      server.close(() => {
        r();
      });
    });
  });

  const at = (repo: string, extra: Partial<OCIRepositoryDef> = {}): OCIRepositoryDef => ({
    kind: 'OCIRepository',
    namespace: 'flux-system',
    name: repo,
    file: 'sources.yaml',
    url: `oci://${host}/${repo}`,
    insecure: true,
    ...extra,
  });

  it('refuses a layer whose bytes do not match its digest', async () => {
    await expect(fetchOCIRepository(at('tampered'), options())).rejects.toThrow(
      `the layer ${layerDigest} downloaded does not match its digest or size`,
    );
  });

  it('refuses a manifest pinned by digest whose content has another digest', async () => {
    const other = `sha256:${'2'.repeat(64)}`;
    await expect(fetchOCIRepository(at('tampered', { ref: { digest: other } }), options())).rejects.toThrow(
      `the manifest ${other}: the registry answered a manifest whose digest is ${manifestDigest}`,
    );
  });

  it('refuses a manifest whose Docker-Content-Digest is not its content’s', async () => {
    await expect(fetchOCIRepository(at('lying'), options())).rejects.toThrow(
      `the registry says its digest is sha256:${'1'.repeat(64)}, but its content's is ${manifestDigest}`,
    );
  });

  it('gives up when the registry does not answer in time', async () => {
    await expect(fetchOCIRepository(at('stall'), options({ timeoutMs: 300 }))).rejects.toThrow(
      `at tag latest failed: timed out after 0.3s (http://${host}/v2/stall/manifests/latest did not answer in time)`,
    );
  });
});
