// Pulling an OCIRepository (src/source/oci.ts, the registry's API in src/source/registry.ts): the
// pure parts as tables (the URL, the ref's plan and revision, semver with its filter,
// WWW-Authenticate challenges, dockerconfigjson logins, manifests and layer selection, registry
// errors, tag-list pagination), what is refused before any request, and the tar extractor
// (src/source/tar.ts) on archives crafted byte by byte: ustar, GNU long names, pax headers, links
// and devices skipped, escapes and limits refused.
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OCIRepositoryDef } from '../../src/flux/source-defs.js';
import { fetchOCIRepository, ociRefPlan, ociRevision, parseOciUrl, semverTag } from '../../src/source/oci.js';
import {
  DOCKER_LIST,
  DOCKER_MANIFEST,
  dockerConfigLogin,
  FLUX_CONTENT_MEDIA_TYPE,
  nextLink,
  OCI_INDEX,
  OCI_MANIFEST,
  parseManifest,
  parseWwwAuthenticate,
  registryError,
  selectLayer,
  type ImageManifest,
} from '../../src/source/registry.js';
import { extractTarGz, isGzip, parsePax, safeParts } from '../../src/source/tar.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

const HEX = 'ab'.repeat(32);
const DIGEST = `sha256:${HEX}`;

describe('parseOciUrl', () => {
  it.each([
    ['oci://ghcr.io/org/app', false, { registry: 'ghcr.io', base: 'https://ghcr.io', repository: 'org/app' }],
    [
      'oci://127.0.0.1:5000/a/b/c',
      true,
      { registry: '127.0.0.1:5000', base: 'http://127.0.0.1:5000', repository: 'a/b/c' },
    ],
    ['oci://localhost/app', false, { registry: 'localhost', base: 'https://localhost', repository: 'app' }],
    ['oci://GHCR.io/org/app', false, { registry: 'ghcr.io', base: 'https://ghcr.io', repository: 'org/app' }],
    [
      'oci://stefanprodan/podinfo',
      false,
      { registry: 'index.docker.io', base: 'https://index.docker.io', repository: 'stefanprodan/podinfo' },
    ],
    [
      'oci://docker.io/nginx',
      false,
      { registry: 'index.docker.io', base: 'https://index.docker.io', repository: 'library/nginx' },
    ],
    ['oci://r.example.com/a_b/c-d/e.f/g__h', false, expect.objectContaining({ repository: 'a_b/c-d/e.f/g__h' })],
  ])('%s (insecure %s)', (url, insecure, want) => {
    expect(parseOciUrl(url, insecure)).toEqual(want);
  });

  it.each([
    ['https://ghcr.io/org/app', "URL must be in format 'oci://<domain>/<org>/<repo>'"],
    ['oci://ghcr.io/org/app:v1', "URL must not contain a tag; remove ':v1'"],
    [`oci://ghcr.io/org/app@${DIGEST}`, 'URL must not contain a digest'],
    ['oci://ghcr.io', 'URL must name a repository'],
    ['oci://ghcr.io/Org/App', '"Org/App" is not a valid repository name'],
    ['oci://ghcr.io/org//app', 'is not a valid repository name'],
    ['oci://ghcr.io/org/app/', 'is not a valid repository name'],
    ['oci://bad_host.io/app', '"bad_host.io" is not a valid registry host'],
  ])('refuses %s', (url, message) => {
    expect(() => parseOciUrl(url)).toThrow(message);
  });
});

describe('ociRefPlan and ociRevision', () => {
  it.each<[string, OCIRepositoryDef['ref'], ReturnType<typeof ociRefPlan>]>([
    ['no ref: tag latest, as Flux defaults', undefined, { kind: 'tag', tag: 'latest', describe: 'tag latest' }],
    ['an empty ref: latest', {}, { kind: 'tag', tag: 'latest', describe: 'tag latest' }],
    ['a tag', { tag: 'v1.2.0' }, { kind: 'tag', tag: 'v1.2.0', describe: 'tag v1.2.0' }],
    ['semver before a tag', { tag: 'v1', semver: '^1.0' }, { kind: 'semver', range: '^1.0', describe: 'semver ^1.0' }],
    [
      'semver with its filter',
      { semver: '>=1.0.0-0', semverFilter: '.*-rc.*' },
      { kind: 'semver', range: '>=1.0.0-0', filter: '.*-rc.*', describe: 'semver >=1.0.0-0 (filter .*-rc.*)' },
    ],
    [
      'a digest before everything',
      { tag: 'v1', semver: '^1', digest: DIGEST },
      { kind: 'digest', digest: DIGEST, describe: `digest ${DIGEST}` },
    ],
  ])('%s', (_, ref, want) => {
    expect(ociRefPlan(ref)).toEqual(want);
  });

  it.each([
    [{ digest: 'sha256:abc' }, 'is not a sha256 digest'],
    [{ digest: `sha512:${HEX}${HEX}` }, 'is not a sha256 digest'],
    [{ digest: `sha256:${HEX.toUpperCase()}` }, 'is not a sha256 digest'],
    [{ tag: 'a/b' }, 'spec.ref.tag "a/b" is not a valid tag'],
    [{ tag: '-x' }, 'is not a valid tag'],
  ])('refuses %j', (ref, message) => {
    expect(() => ociRefPlan(ref)).toThrow(message);
  });

  it.each([
    ['v1.0.0', DIGEST, `v1.0.0@${DIGEST}`],
    ['latest', DIGEST, `latest@${DIGEST}`],
    [undefined, DIGEST, DIGEST],
  ])('revision of tag %s', (tag, digest, want) => {
    expect(ociRevision(tag, digest)).toBe(want);
  });
});

describe('semverTag', () => {
  const tags = ['1.0.0', '1.1.0', 'v1.2.0', '1.3.0-rc.1', '2.0.0-rc.1', '2.0.0-beta.3', 'latest', 'main-abc123'];
  it.each([
    ['the highest release in range', '>=1.0.0', undefined, 'v1.2.0'],
    ['prereleases only with a prerelease range', '>=1.0.0-0', undefined, '2.0.0-rc.1'],
    ['the filter first (unanchored, as Go MatchString)', '>=1.0.0-0', '-rc', '2.0.0-rc.1'],
    ['the filter leaves out a higher tag', '>=1.0.0-0', '^1\\.', '1.3.0-rc.1'],
    ['the filter can leave nothing', '>=1.0.0', '^9', undefined],
    ['no tag in range', '>=3.0.0', undefined, undefined],
    ['beta by filter', '>=1.0.0-0', 'beta', '2.0.0-beta.3'],
  ])('%s', (_, range, filter, want) => {
    expect(semverTag(tags, range, filter)).toBe(want);
  });

  it('names a semverFilter that is not a regular expression', () => {
    expect(() => semverTag(tags, '>=1', '(')).toThrow('spec.ref.semverFilter "(" is not a valid regular expression');
  });

  // The filter is a Go regular expression (RE2), matched in linear time: `^(a+)+$` against 40 a and
  // a `!` takes a backtracking RegExp hours; here the row fails by its timeout if it backtracks.
  it.each<[string, string[], string, string | undefined]>([
    ['nested quantifiers against a long tag', ['1.0.0', `${'a'.repeat(5000)}!`], '^(a+)+$', undefined],
    ['nested quantifiers, a tag that matches', ['1.0.0', 'a'.repeat(5000)], '^(a+)+$|^1', '1.0.0'],
    ['Go flags: (?i)', ['v1.0.0', '1.1.0'], '(?i)^V', 'v1.0.0'],
    ['Go character classes: \\pN', ['1.0.0', 'x1.1.0'], '^\\pN', '1.0.0'],
  ])('%s', (_, list, filter, want) => {
    expect(semverTag(list, '>=0.0.0', filter)).toBe(want);
  });

  it.each([
    ['(?=1)', 'a lookahead, which Go refuses'],
    ['\\1', 'a backreference, which Go refuses'],
  ])('refuses %s: %s', (filter) => {
    expect(() => semverTag(tags, '>=1', filter)).toThrow(
      new RegExp(`^spec\\.ref\\.semverFilter .* is not a valid regular expression \\(Go syntax\\): `),
    );
  });
});

describe('parseWwwAuthenticate', () => {
  it.each([
    [
      'ghcr.io',
      'Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:org/app:pull"',
      {
        scheme: 'bearer',
        params: { realm: 'https://ghcr.io/token', service: 'ghcr.io', scope: 'repository:org/app:pull' },
      },
    ],
    [
      'a scope with commas inside quotes',
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push"',
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.docker.io/token',
          service: 'registry.docker.io',
          scope: 'repository:samalba/my-app:pull,push',
        },
      },
    ],
    ['basic', 'Basic realm="Registry Realm"', { scheme: 'basic', params: { realm: 'Registry Realm' } }],
    ['a bare scheme', 'Basic', { scheme: 'basic', params: {} }],
    [
      'unquoted values, spaces, upper-case keys',
      'BEARER Realm=https://x/token , Service=x',
      { scheme: 'bearer', params: { realm: 'https://x/token', service: 'x' } },
    ],
    ['escaped quotes', 'Bearer realm="a\\"b"', { scheme: 'bearer', params: { realm: 'a"b' } }],
  ])('%s', (_, header, want) => {
    expect(parseWwwAuthenticate(header)).toEqual(want);
  });

  it.each([[null], [undefined], [''], ['   '], ['"quoted"']])('none in %j', (header) => {
    expect(parseWwwAuthenticate(header)).toBeUndefined();
  });
});

describe('dockerConfigLogin', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const config = (auths: Record<string, unknown>) => JSON.stringify({ auths });
  it.each([
    [
      'username and password',
      config({ 'ghcr.io': { username: 'u', password: 'p' } }),
      'ghcr.io',
      { username: 'u', password: 'p' },
    ],
    [
      'auth, base64',
      config({ 'ghcr.io': { auth: b64('u:p:with:colons') } }),
      'ghcr.io',
      { username: 'u', password: 'p:with:colons' },
    ],
    [
      'a key with a scheme and a path',
      config({ 'https://registry.example.com:5000/v1/': { auth: b64('a:b') } }),
      'registry.example.com:5000',
      { username: 'a', password: 'b' },
    ],
    [
      'keys compared in lower case',
      config({ 'GHCR.IO': { username: 'u', password: 'p' } }),
      'ghcr.io',
      { username: 'u', password: 'p' },
    ],
    [
      'Docker Hub by any of its names',
      config({ 'https://index.docker.io/v1/': { auth: b64('hub:pw') } }),
      'index.docker.io',
      { username: 'hub', password: 'pw' },
    ],
    ['another host only', config({ 'quay.io': { username: 'u', password: 'p' } }), 'ghcr.io', undefined],
    [
      'the port matters',
      config({ 'r.example.com': { username: 'u', password: 'p' } }),
      'r.example.com:5000',
      undefined,
    ],
    [
      'an entry without a login is passed over',
      config({ 'ghcr.io': {}, 'https://ghcr.io': { auth: b64('x:y') } }),
      'ghcr.io',
      { username: 'x', password: 'y' },
    ],
  ])('%s', (_, json, host, want) => {
    expect(dockerConfigLogin(json, host)).toEqual(want);
  });

  it.each([
    ['{', '.dockerconfigjson is not valid JSON'],
    ['{"credHelpers":{}}', 'has no "auths" object'],
    [config({ 'ghcr.io': { auth: b64('nocolon') } }), 'is not base64 of USERNAME:PASSWORD'],
    [config({ 'ghcr.io': { identitytoken: 'rt' } }), 'holds only an identitytoken'],
  ])('refuses %s', (json, message) => {
    expect(() => dockerConfigLogin(json, 'ghcr.io')).toThrow(message);
  });
});

describe('manifests and layers', () => {
  const layer = (mediaType: string, n: number) => ({ mediaType, digest: `sha256:${String(n).repeat(64)}`, size: n });
  const manifest = (extra: Record<string, unknown>) =>
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        config: { mediaType: 'application/vnd.cncf.flux.config.v1+json', digest: DIGEST, size: 2 },
        layers: [
          layer('application/vnd.other+gzip', 1),
          layer(FLUX_CONTENT_MEDIA_TYPE, 2),
          layer(FLUX_CONTENT_MEDIA_TYPE, 3),
        ],
        ...extra,
      }),
    );

  it.each([
    ['an OCI manifest', manifest({ mediaType: OCI_MANIFEST }), null, OCI_MANIFEST],
    ['a Docker v2 manifest', manifest({ mediaType: DOCKER_MANIFEST }), null, DOCKER_MANIFEST],
    ['the media type from Content-Type', manifest({}), `${OCI_MANIFEST}; charset=utf-8`, OCI_MANIFEST],
    ['an OCI manifest without any media type', manifest({}), null, OCI_MANIFEST],
  ])('reads %s', (_, body, contentType, mediaType) => {
    const m = parseManifest(body, contentType);
    expect(m.mediaType).toBe(mediaType);
    expect(m.layers.map((l) => l.size)).toEqual([1, 2, 3]);
  });

  it.each([
    [
      'an OCI index',
      Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [] })),
      null,
      'is an image index',
    ],
    [
      'a Docker manifest list',
      Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [] })),
      DOCKER_LIST,
      'is an image index',
    ],
    ['schema 1', Buffer.from(JSON.stringify({ schemaVersion: 1, fsLayers: [] })), null, 'unsupported manifest'],
    ['another media type', manifest({ mediaType: 'application/vnd.example+json' }), null, 'unsupported manifest'],
    ['no layers', Buffer.from(JSON.stringify({ schemaVersion: 2 })), null, 'no layers list'],
    ['a broken layer', manifest({ layers: [{ digest: DIGEST }] }), null, 'layers[0] is not a descriptor'],
    ['not JSON', Buffer.from('<html>'), null, 'not JSON'],
  ])('refuses %s', (_, body, contentType, message) => {
    expect(() => parseManifest(body, contentType)).toThrow(message);
  });

  const m: ImageManifest = parseManifest(manifest({}), null);
  it.each([
    ['no selector: the first layer', undefined, 1],
    ['an empty media type: the first layer', '', 1],
    ["Flux's content type: the first of that type", FLUX_CONTENT_MEDIA_TYPE, 2],
    ['the other type', 'application/vnd.other+gzip', 1],
  ])('selectLayer: %s', (_, mediaType, size) => {
    expect(selectLayer(m, mediaType).size).toBe(size);
  });

  it('selectLayer names a media type no layer has, and an empty manifest', () => {
    expect(() => selectLayer(m, 'application/x-nope')).toThrow(
      "failed to find layer with media type 'application/x-nope' in artifact (its layers: application/vnd.other+gzip, application/vnd.cncf.flux.content.v1.tar+gzip)",
    );
    expect(() => selectLayer({ mediaType: OCI_MANIFEST, layers: [] })).toThrow('no layers found in artifact');
  });
});

describe('registry answers', () => {
  it.each([
    [
      404,
      '{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{}}]}',
      'HTTP 404: manifest unknown (MANIFEST_UNKNOWN)',
    ],
    [
      401,
      '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}',
      'HTTP 401: authentication required (UNAUTHORIZED)',
    ],
    [500, 'upstream broke\nmore', 'HTTP 500: upstream broke'],
    [403, '', 'HTTP 403'],
    [404, '{"errors":[]}', 'HTTP 404'],
  ])('registryError %i %s', (status, body, want) => {
    expect(registryError(status, body)).toBe(want);
  });

  const base = 'http://127.0.0.1:5000';
  it.each([
    [null, undefined],
    ['</v2/a/tags/list?last=x&n=2>; rel="next"', `${base}/v2/a/tags/list?last=x&n=2`],
    [`<${base}/v2/a/tags/list?last=y>; rel=next`, `${base}/v2/a/tags/list?last=y`],
    ['</v2/a/tags/list?last=z>; rel="prev"', undefined],
  ])('nextLink %s', (link, want) => {
    expect(nextLink(link, `${base}/v2/a/tags/list?n=2`, base)).toBe(want);
  });

  it('nextLink refuses another host', () => {
    expect(() => nextLink('<http://evil.example/v2/a/tags/list>; rel="next"', `${base}/v2/x`, base)).toThrow(
      'is on another host',
    );
  });
});

describe('fetchOCIRepository refuses before any request', () => {
  const def = (extra: Partial<OCIRepositoryDef>): OCIRepositoryDef => ({
    kind: 'OCIRepository',
    namespace: 'apps',
    name: 'podinfo',
    file: 'clusters/oci.yaml',
    url: 'oci://127.0.0.1:9/never/asked',
    insecure: true,
    secretRef: 'pull-secret',
    ...extra,
  });
  const asked: string[] = [];
  const opts = {
    credentials: {},
    secret: () => undefined,
    readSecret: (ns: string, name: string) => {
      asked.push(`${ns}/${name}`);
      return Promise.resolve({});
    },
  };
  it.each([
    [{ provider: 'aws' }, 'spec.provider aws (cloud workload identity) is not supported here'],
    [{ provider: 'azure' }, 'spec.provider azure'],
    [{ verify: true }, 'spec.verify is set, and signature verification is not done here'],
    [{ url: 'oci://127.0.0.1:9/never/asked:v1' }, "URL must not contain a tag; remove ':v1'"],
    [{ ref: { digest: 'sha256:1' } }, 'spec.ref.digest "sha256:1" is not a sha256 digest'],
  ])('%j', async (extra, message) => {
    const err = await fetchOCIRepository(def(extra), opts).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain(
      'fetching OCIRepository apps/podinfo (clusters/oci.yaml): oci://127.0.0.1:9/',
    );
    expect((err as Error).message).toContain(message);
    expect(asked).toEqual([]);
  });
});

// ---- tar ----

interface Entry {
  name: string;
  data?: Buffer | string;
  type?: string;
  mode?: number;
  linkname?: string;
  /** ustar's prefix field (POSIX magic). */
  prefix?: string;
  gnu?: boolean;
}

function octal(n: number, len: number): string {
  return n.toString(8).padStart(len - 1, '0') + '\0';
}

function header(e: Entry, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.name, 0, 100, 'utf8');
  h.write(octal(e.mode ?? 0o644, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(0, 12), 136, 'latin1');
  h.write(e.type ?? '0', 156, 'latin1');
  h.write(e.linkname ?? '', 157, 100, 'utf8');
  h.write(e.gnu ? 'ustar  \0' : 'ustar\x0000', 257, 'latin1');
  if (e.prefix !== undefined) h.write(e.prefix, 345, 155, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'latin1');
  return h;
}

function block(e: Entry): Buffer {
  const data = Buffer.from(e.data ?? '');
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([header(e, data.length), data, pad]);
}

function paxRecords(records: Record<string, string>): string {
  let out = '';
  for (const [k, v] of Object.entries(records)) {
    const body = ` ${k}=${v}\n`;
    let len = body.length + 1;
    while (String(len).length + body.length !== len) len = String(len).length + body.length;
    out += `${len}${body}`;
  }
  return out;
}

const tarOf = (...entries: Entry[]) => Buffer.concat([...entries.map(block), Buffer.alloc(1024)]);
const pax = (records: Record<string, string>, type = 'x'): Entry => ({
  name: 'PaxHeaders/x',
  type,
  data: paxRecords(records),
});

describe('tar extraction', () => {
  let work = '';
  let dir = '';
  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), 'kr-tar-test-'));
    dir = join(work, 'out');
    await mkdir(dir);
  });
  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it.each([
    [Buffer.from([0x1f, 0x8b, 8]), true],
    [gzipSync(Buffer.from('x')), true],
    [Buffer.from([0x1f]), false],
    [Buffer.from('ustar'), false],
    [Buffer.alloc(0), false],
  ])('isGzip %#', (buf, want) => {
    expect(isGzip(buf)).toBe(want);
  });

  it.each([
    ['gzip-compressed', true],
    ['plain', false],
  ])('writes files and directories (%s), with their modes, and returns the files', async (_, gz) => {
    const tar = tarOf(
      { name: './', type: '5', mode: 0o755 },
      { name: './app/', type: '5', mode: 0o700 },
      { name: './app/ks.yaml', data: 'kind: Kustomization\n' },
      { name: './app/run.sh', data: '#!/bin/sh\n', mode: 0o750 },
      { name: 'empty/', type: '5' },
      { name: 'top.txt', data: 'x'.repeat(1500) },
      { name: 'app/ks.yaml', data: 'kind: Kustomization # again\n' },
    );
    const written = await extractTarGz(gz ? gzipSync(tar) : tar, dir);
    expect(written).toEqual(['app/ks.yaml', 'app/run.sh', 'top.txt']);
    expect(await readFile(join(dir, 'app/ks.yaml'), 'utf8')).toBe('kind: Kustomization # again\n');
    expect(await readFile(join(dir, 'top.txt'), 'utf8')).toBe('x'.repeat(1500));
    expect((await stat(join(dir, 'app/run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(join(dir, 'app/ks.yaml'))).mode & 0o777).toBe(0o644);
    expect((await stat(join(dir, 'empty'))).isDirectory()).toBe(true);
  });

  it.each([
    [
      'ustar prefix',
      { name: 'file.yaml', prefix: `${'p'.repeat(120)}/deep`, data: 'a' },
      `${'p'.repeat(120)}/deep/file.yaml`,
    ],
    ['GNU format ignores the prefix area', { name: 'g.yaml', prefix: 'junk', gnu: true, data: 'a' }, 'g.yaml'],
  ])('names: %s', async (_, entry, want) => {
    expect(await extractTarGz(tarOf(entry), dir)).toEqual([want]);
    expect(existsSync(join(dir, want))).toBe(true);
  });

  it('reads GNU long names and pax paths, and does not apply a global pax header', async () => {
    const long = `${'d'.repeat(90)}/${'e'.repeat(90)}/${'f'.repeat(90)}.yaml`;
    const longer = `${'q'.repeat(200)}/${'r'.repeat(120)}.yaml`;
    const tar = tarOf(
      { name: '././@LongLink', type: 'L', data: `${long}\0` },
      { name: long.slice(0, 99), data: 'gnu' },
      pax({ path: longer, mtime: '1.5', 'SCHILY.xattr.user.x': 'y' }),
      { name: 'truncated-name', data: 'pax' },
      pax({ path: 'global-name' }, 'g'),
      { name: 'after-global.yaml', data: 'g' },
    );
    expect(await extractTarGz(tar, dir)).toEqual([long, longer, 'after-global.yaml']);
    expect(await readFile(join(dir, long), 'utf8')).toBe('gnu');
    expect(await readFile(join(dir, longer), 'utf8')).toBe('pax');
    expect(existsSync(join(dir, 'global-name'))).toBe(false);
    expect(existsSync(join(dir, 'truncated-name'))).toBe(false);
  });

  it('takes a pax size over the header one', async () => {
    const body = 'x'.repeat(700);
    const entry = block({ name: 'big.txt', data: body });
    entry.write(octal(0, 12), 124, 'latin1'); // the header says 0 bytes, then fix the checksum
    entry.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of entry.subarray(0, 512)) sum += b;
    entry.write(octal(sum, 7) + ' ', 148, 'latin1');
    const tar = Buffer.concat([block(pax({ size: '700' })), entry, Buffer.alloc(1024)]);
    expect(await extractTarGz(tar, dir)).toEqual(['big.txt']);
    expect(await readFile(join(dir, 'big.txt'), 'utf8')).toBe(body);
  });

  it.each<[string, Entry[]]>([
    ['a symlink', [{ name: 'link', type: '2', linkname: '/etc/passwd' }]],
    [
      'a symlink with a GNU long link name',
      [
        { name: '././@LongLink', type: 'K', data: `/${'l'.repeat(150)}\0` },
        { name: 'link', type: '2', linkname: 'x' },
      ],
    ],
    ['a hard link', [{ name: 'hard', type: '1', linkname: 'ok.yaml' }]],
    ['a character device', [{ name: 'dev', type: '3' }]],
    ['a block device', [{ name: 'blk', type: '4' }]],
    ['a FIFO', [{ name: 'fifo', type: '6' }]],
    ['an unknown type, with its data', [{ name: 'sparse', type: 'S', data: 'z'.repeat(600) }]],
  ])('skips %s, creating nothing for it', async (_, entries) => {
    const written = await extractTarGz(
      tarOf({ name: 'ok.yaml', data: 'a' }, ...entries, { name: 'z.yaml', data: 'z' }),
      dir,
    );
    expect(written).toEqual(['ok.yaml', 'z.yaml']);
    expect((await readdir(dir)).sort()).toEqual(['ok.yaml', 'z.yaml']);
  });

  it('a file under a skipped symlink lands in a real directory inside', async () => {
    const tar = tarOf({ name: 'out', type: '2', linkname: work }, { name: 'out/escaped.txt', data: 'x' });
    expect(await extractTarGz(tar, dir)).toEqual(['out/escaped.txt']);
    expect((await lstat(join(dir, 'out'))).isDirectory()).toBe(true);
    expect(existsSync(join(work, 'escaped.txt'))).toBe(false);
  });

  it.each([
    ['an absolute path', { name: '/etc/evil', data: 'x' }, '"/etc/evil" is refused: an absolute path'],
    ['a parent path', { name: '../evil', data: 'x' }, '"../evil" is refused: a path with ".."'],
    ['a parent path deeper', { name: 'a/b/../../../evil', data: 'x' }, '"a/b/../../../evil" is refused'],
    ['a parent path that stays inside (Flux refuses it too)', { name: 'a/../b', data: 'x' }, '"a/../b" is refused'],
    ['a parent directory entry', { name: '../', type: '5' }, '"../" is refused'],
    ['a backslash', { name: 'a\\..\\evil', data: 'x' }, 'a path with a backslash'],
    ['a symlink named absolutely', { name: '/abs-link', type: '2', linkname: 'x' }, 'an absolute path'],
  ])('refuses %s, naming the entry', async (_, entry, message) => {
    await expect(extractTarGz(tarOf({ name: 'first.yaml', data: '1' }, entry), dir)).rejects.toThrow(message);
    expect(existsSync(join(work, 'evil'))).toBe(false);
    expect(existsSync('/etc/evil')).toBe(false);
  });

  it.each([
    [
      'a pax path',
      tarOf(pax({ path: '../../pax-evil' }), { name: 'innocent', data: 'x' }),
      '"../../pax-evil" is refused',
    ],
    [
      'a GNU long name',
      tarOf({ name: '././@LongLink', type: 'L', data: '/tmp/gnu-evil\0' }, { name: 'innocent', data: 'x' }),
      '"/tmp/gnu-evil" is refused: an absolute path',
    ],
  ])('refuses an escape through %s', async (_, tar, message) => {
    await expect(extractTarGz(tar, dir)).rejects.toThrow(message);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a file where a directory is, and a directory where a file is', async () => {
    await expect(extractTarGz(tarOf({ name: 'a/', type: '5' }, { name: 'a', data: 'x' }), dir)).rejects.toThrow(
      '"a" is both a directory and a file',
    );
    await rm(dir, { recursive: true });
    await mkdir(dir);
    await expect(extractTarGz(tarOf({ name: 'f', data: 'x' }, { name: 'f/g', data: 'y' }), dir)).rejects.toThrow(
      '"f" is both a file and a directory',
    );
  });

  it.each([
    [
      'the total bytes',
      tarOf({ name: 'a', data: 'x'.repeat(600) }, { name: 'b', data: 'y'.repeat(600) }),
      { maxBytes: 1000 },
      'more than 1000 bytes',
    ],
    [
      'the file count',
      tarOf({ name: 'a', data: '1' }, { name: 'b/', type: '5' }, { name: 'c', data: '3' }),
      { maxFiles: 2 },
      'more than 2 entries',
    ],
    [
      'skipped entries count too',
      tarOf({ name: 'l1', type: '2' }, { name: 'l2', type: '2' }, { name: 'l3', type: '2' }),
      { maxFiles: 2 },
      'more than 2 entries',
    ],
    [
      'a gzip bomb',
      gzipSync(Buffer.alloc(8 << 20)),
      { maxBytes: 1024, maxFiles: 10 },
      'the archive inflates to more than',
    ],
  ])('caps %s', async (_, data, limits, message) => {
    await expect(extractTarGz(data, dir, limits)).rejects.toThrow(message);
  });

  it('stays within the limits when they are met exactly', async () => {
    const tar = tarOf({ name: 'a', data: 'x'.repeat(500) }, { name: 'b', data: 'y'.repeat(500) });
    expect(await extractTarGz(gzipSync(tar), dir, { maxBytes: 1000, maxFiles: 2 })).toEqual(['a', 'b']);
  });

  it.each([
    [
      'a bad checksum',
      (() => {
        const t = tarOf({ name: 'a', data: 'x' });
        t[0] = 0x62;
        return t;
      })(),
      'bad header checksum at offset 0',
    ],
    ['a truncated body', tarOf({ name: 'a', data: 'x'.repeat(1000) }).subarray(0, 700), 'truncated'],
    ['a truncated header', tarOf({ name: 'a', data: 'x' }).subarray(0, 1024 + 100), 'truncated'],
    ['not gzip inside', Buffer.from([0x1f, 0x8b, 0, 0, 1, 2, 3]), 'not valid gzip'],
    [
      'a malformed pax record',
      tarOf({ name: 'p', type: 'x', data: '99 path=x\n' }, { name: 'a', data: 'x' }),
      'malformed pax',
    ],
    [
      'a bad size field',
      (() => {
        const h = header({ name: 'a' }, 0);
        h.write('9x\0', 124, 'latin1');
        h.fill(0x20, 148, 156);
        let sum = 0;
        for (const b of h) sum += b;
        h.write(octal(sum, 7) + ' ', 148, 'latin1');
        return Buffer.concat([h, Buffer.alloc(1024)]);
      })(),
      'invalid size',
    ],
  ])('refuses %s', async (_, data, message) => {
    await expect(extractTarGz(data, dir)).rejects.toThrow(message);
  });

  it('reads an empty archive (two zero blocks, or nothing) as no files', async () => {
    expect(await extractTarGz(Buffer.alloc(1024), dir)).toEqual([]);
    expect(await extractTarGz(gzipSync(Buffer.alloc(0)), dir)).toEqual([]);
  });

  it.each([
    ['a/b/c', ['a', 'b', 'c']],
    ['./a//b/', ['a', 'b']],
    ['.', []],
    ['a/..b/c..', ['a', '..b', 'c..']],
  ])('safeParts(%s)', (name, want) => {
    expect(safeParts(name)).toEqual(want);
  });

  it('parsePax reads records whose values hold spaces, = and newlines', () => {
    const data = Buffer.from(paxRecords({ path: 'a b=c', comment: 'x\ny' }));
    expect(parsePax(data)).toEqual({ path: 'a b=c', comment: 'x\ny' });
  });
});
