// The pure parts of fetching a Flux Bucket (src/source/bucket.ts, the S3 API in src/source/s3.ts):
// providers, endpoints and names refused; request URLs as minio-go addresses them, signed as AWS's
// published S3 examples are; ListObjectsV2 answers and S3 errors read; which keys source-controller
// fetches; keys that would leave the root; and the revision, pinned to digests computed by hand from
// source-controller's index format (`<key> <etag>\n` per key, keys in byte order, SHA-256).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bucketPatterns,
  bucketRevision,
  indexText,
  judgeKey,
  keyProblem,
  objectPath,
  providerRefusal,
  type KeyVerdict,
} from '../../src/source/bucket.js';
import { byBytes } from '../../src/util/order.js';
import {
  bucketNameProblem,
  encodeKey,
  endpointProblem,
  envCredentialsRefusal,
  isAmazonS3Host,
  isAwsS3Endpoint,
  listQuery,
  parseListObjectsV2,
  parseLocation,
  parseS3Error,
  regionOfS3Host,
  s3Target,
  s3Url,
  trimEtag,
  xmlText,
  type S3Target,
} from '../../src/source/s3.js';
import { signV4 } from '../../src/aws/sigv4.js';
import { heavyFile } from '../helpers/heavy.js';

heavyFile();

describe('providerRefusal', () => {
  it.each([
    ['generic', undefined],
    ['', undefined],
    ['aws', undefined],
    ['gcp', /^provider gcp \(the Google Cloud Storage API\) is not supported: only providers generic and aws/],
    ['azure', /^provider azure \(the Azure Blob Storage API\) is not supported/],
    ['minio', /^provider minio is not one of Flux's \(generic, aws, gcp, azure\)$/],
  ])('%j', (provider, want) => {
    const got = providerRefusal(provider);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });
});

describe('endpointProblem', () => {
  it.each([
    ['minio.example.com', undefined],
    ['127.0.0.1:9000', undefined],
    ['[::1]:9000', undefined],
    ['s3.eu-west-1.amazonaws.com', undefined],
    ['https://minio.example.com', 'has a scheme'],
    ['minio.example.com/bucket', 'is not host[:port]'],
    ['user@minio.example.com', 'is not host[:port]'],
    ['', 'is not host[:port]'],
    ['minio.example.com:99999', 'has no valid port'],
  ])('%j', (endpoint, want) => {
    const got = endpointProblem(endpoint);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(want);
  });
});

describe('bucketNameProblem (minio-go’s CheckValidBucketName)', () => {
  it.each([
    ['my-bucket', undefined],
    ['My_Bucket:1', undefined],
    ['a.b.c', undefined],
    ['ab', 'is not 3 to 63 characters'],
    ['x'.repeat(64), 'is not 3 to 63 characters'],
    ['192.168.1.1', 'is an IP address'],
    ['a..b', 'holds characters'],
    ['a.-b', 'holds characters'],
    ['-ab', 'holds characters'],
    ['a/b', 'holds characters'],
    ['a b', 'holds characters'],
  ])('%j', (name, want) => {
    const got = bucketNameProblem(name);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(want);
  });
});

describe('Amazon S3 hosts (minio-go’s GetRegionFromURL and IsAmazonEndpoint)', () => {
  it.each([
    ['s3.amazonaws.com', true, undefined],
    ['s3-external-1.amazonaws.com', true, undefined],
    ['s3.eu-west-1.amazonaws.com', true, 'eu-west-1'],
    ['s3-eu-west-1.amazonaws.com', true, 'eu-west-1'],
    ['s3.dualstack.us-west-2.amazonaws.com', true, 'us-west-2'],
    ['s3-fips.us-gov-west-1.amazonaws.com', true, 'us-gov-west-1'],
    ['s3.cn-north-1.amazonaws.com.cn', true, 'cn-north-1'],
    ['bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com', true, 'us-east-1'],
    ['s3.website-us-east-1.amazonaws.com', false, undefined],
    ['my-elb-123.us-east-1.elb.amazonaws.com', false, undefined],
    ['minio.example.com', false, undefined],
    ['storage.googleapis.com', false, undefined],
  ])('%s', (host, amazon, region) => {
    expect(isAmazonS3Host(host)).toBe(amazon);
    expect(regionOfS3Host(host)).toBe(region);
  });
});

describe('s3Url: path-style but for Amazon S3, Google and Aliyun (virtual-host), as minio-go', () => {
  const t = (endpoint: string, bucket = 'my-bucket', insecure = false): S3Target =>
    s3Target({ endpoint, bucketName: bucket, insecure });
  it.each<[string, S3Target, string | undefined, string | undefined, [string, string][], string]>([
    ['moto, http', t('127.0.0.1:5000', 'flux', true), 'us-east-1', 'a.yaml', [], 'http://127.0.0.1:5000/flux/a.yaml'],
    [
      'a bucket request ends in /',
      t('minio.example.com'),
      'us-east-1',
      undefined,
      [],
      'https://minio.example.com/my-bucket/',
    ],
    [
      'the default port is left out',
      t('minio.example.com:443'),
      undefined,
      'x',
      [],
      'https://minio.example.com/my-bucket/x',
    ],
    ['a port is kept', t('MinIO.example.com:9000'), undefined, 'x', [], 'https://minio.example.com:9000/my-bucket/x'],
    [
      'each key segment encoded as RFC 3986 says',
      t('minio.example.com'),
      undefined,
      "apps/sub dir/a+b(1)!'*~ü.yaml",
      [],
      'https://minio.example.com/my-bucket/apps/sub%20dir/a%2Bb%281%29%21%27%2A~%C3%BC.yaml',
    ],
    [
      'the listing query sorted and encoded',
      t('minio.example.com'),
      undefined,
      undefined,
      listQuery('apps/x y', 'tok+en/=', 4),
      'https://minio.example.com/my-bucket/?continuation-token=tok%2Ben%2F%3D&encoding-type=url&list-type=2&max-keys=4&prefix=apps%2Fx%20y',
    ],
    [
      'location',
      t('minio.example.com'),
      undefined,
      undefined,
      [['location', '']],
      'https://minio.example.com/my-bucket/?location=',
    ],
    [
      'Amazon S3: virtual-host on the region’s dual-stack endpoint',
      t('s3.amazonaws.com'),
      'eu-central-1',
      'k',
      [],
      'https://my-bucket.s3.dualstack.eu-central-1.amazonaws.com/k',
    ],
    [
      'Amazon S3 before the region is known: the endpoint as given',
      t('s3.amazonaws.com'),
      undefined,
      undefined,
      [['location', '']],
      'https://my-bucket.s3.amazonaws.com/?location=',
    ],
    [
      'Amazon S3 China',
      t('s3.cn-north-1.amazonaws.com.cn'),
      'cn-north-1',
      'k',
      [],
      'https://my-bucket.s3.dualstack.cn-north-1.amazonaws.com.cn/k',
    ],
    [
      'Amazon S3 FIPS: the host is kept',
      t('s3-fips.us-east-1.amazonaws.com'),
      'us-east-1',
      'k',
      [],
      'https://my-bucket.s3-fips.us-east-1.amazonaws.com/k',
    ],
    [
      'a dotted name over HTTPS: path-style',
      t('s3.eu-west-1.amazonaws.com', 'my.bucket'),
      'eu-west-1',
      'k',
      [],
      'https://s3.dualstack.eu-west-1.amazonaws.com/my.bucket/k',
    ],
    [
      'a dotted name over HTTP: virtual-host',
      t('s3.eu-west-1.amazonaws.com', 'my.bucket', true),
      'eu-west-1',
      'k',
      [],
      'http://my.bucket.s3.dualstack.eu-west-1.amazonaws.com/k',
    ],
    ['Google', t('storage.googleapis.com'), 'auto', 'k', [], 'https://my-bucket.storage.googleapis.com/k'],
    ['Aliyun', t('oss-cn-hangzhou.aliyuncs.com'), 'x', 'k', [], 'https://my-bucket.oss-cn-hangzhou.aliyuncs.com/k'],
  ])('%s', (_, target, region, key, query, want) => {
    expect(s3Url(target, region, key, query).href).toBe(want);
  });

  it('encodeKey keeps `/` and unreserved characters only', () => {
    expect(encodeKey('a/b c/%2F/ü')).toBe('a/b%20c/%252F/%C3%BC');
  });

  it('listQuery: no token and no page size on the first page', () => {
    expect(listQuery('', undefined)).toEqual([
      ['list-type', '2'],
      ['encoding-type', 'url'],
      ['prefix', ''],
    ]);
  });
});

// AWS's published examples of Signature Version 4 for S3 (AmazonS3 API reference, "Signature
// Calculations for the Authorization Header: Transferring Payload in a Single Chunk"), with the URLs
// built by s3Url: the signer of sops/kms/aws.ts signs S3 requests as AWS does.
describe('S3 requests signed as AWS’s examples', () => {
  const creds = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const target = s3Target({ endpoint: 's3.amazonaws.com', bucketName: 'examplebucket', insecure: false });
  const empty = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
  it.each<[string, string | undefined, [string, string][], Record<string, string>, string]>([
    [
      'GET Object',
      'test.txt',
      [],
      { range: 'bytes=0-9' },
      'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    ],
    [
      'GET Bucket (List Objects)',
      undefined,
      [
        ['prefix', 'J'],
        ['max-keys', '2'],
      ],
      {},
      '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    ],
    [
      'GET Bucket Lifecycle',
      undefined,
      [['lifecycle', '']],
      {},
      'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    ],
  ])('%s', (_, key, query, headers, signature) => {
    const url = s3Url(target, undefined, key, query);
    const signed = signV4(
      { method: 'GET', url, headers: { ...headers, 'x-amz-content-sha256': empty }, body: '' },
      creds,
      'us-east-1',
      's3',
      new Date('2013-05-24T00:00:00Z'),
    );
    expect(signed['authorization']).toMatch(new RegExp(`, Signature=${signature}$`));
  });
});

describe('parseListObjectsV2', () => {
  const page = (contents: string, rest = '') =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
    `<Name>b</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>${rest}${contents}</ListBucketResult>`;
  const obj = (key: string, etag = '&quot;abc&quot;', size = '12') =>
    `<Contents><Key>${key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>${etag}</ETag><Size>${size}</Size><StorageClass>STANDARD</StorageClass></Contents>`;

  it.each<[string, string, { key: string; etag: string; size: number }[], boolean, string | undefined]>([
    [
      'AWS’s form: quoted ETags as entities',
      page(obj('apps/a.yaml'), '<IsTruncated>false</IsTruncated>'),
      [{ key: 'apps/a.yaml', etag: 'abc', size: 12 }],
      false,
      undefined,
    ],
    [
      'url encoding: + is a space, %2B a plus',
      page(obj('a%20b/c%2Bd+e%26.yaml'), '<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>'),
      [{ key: 'a b/c+d e&.yaml', etag: 'abc', size: 12 }],
      false,
      undefined,
    ],
    [
      'no EncodingType: the key as written, entities decoded once',
      page(obj('a+b&amp;c&lt;&#x41;&#66;&amp;lt;.yaml')),
      [{ key: 'a+b&c<AB&lt;.yaml', etag: 'abc', size: 12 }],
      false,
      undefined,
    ],
    [
      'a truncated page and its token',
      page(
        obj('k1', '"e1"') + obj('k2', 'e2'),
        '<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>',
      ),
      [
        { key: 'k1', etag: 'e1', size: 12 },
        { key: 'k2', etag: 'e2', size: 12 },
      ],
      true,
      '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=',
    ],
    ['an empty bucket', page('', '<IsTruncated>false</IsTruncated>'), [], false, undefined],
    [
      'moto’s self-closing elements',
      page(obj('x', '"e"', '0'), '<Prefix/><IsTruncated>false</IsTruncated>'),
      [{ key: 'x', etag: 'e', size: 0 }],
      false,
      undefined,
    ],
    [
      'CDATA kept as is',
      page(obj('<![CDATA[a&amp;b]]>')),
      [{ key: 'a&amp;b', etag: 'abc', size: 12 }],
      false,
      undefined,
    ],
  ])('%s', (_, xml, objects, truncated, token) => {
    const got = parseListObjectsV2(xml);
    expect(got.objects).toEqual(objects);
    expect(got.truncated).toBe(truncated);
    expect(got.nextToken).toBe(token);
  });

  it.each([
    ['not a listing', '<Error><Code>AccessDenied</Code></Error>', 'the answer is not a ListBucketResult'],
    [
      'an object without a key',
      page('<Contents><ETag>e</ETag></Contents>'),
      'the listing holds an object without a Key',
    ],
    [
      'a malformed escape',
      page(obj('a%ZZ'), '<EncodingType>url</EncodingType>'),
      'the listing holds a malformed URL-encoded key "a%ZZ"',
    ],
  ])('%s is an error', (_, xml, message) => {
    expect(() => parseListObjectsV2(xml)).toThrow(message);
  });

  it('xmlText and trimEtag', () => {
    expect(xmlText('&amp;amp; &#128512; &bogus; &#x110000;')).toBe('&amp; 😀 &bogus; &#x110000;');
    expect(trimEtag('"9b2cf535f27731c974343645a3985328-2"')).toBe('9b2cf535f27731c974343645a3985328-2');
    expect(trimEtag('W/"x"')).toBe('W/"x');
  });
});

describe('S3 errors and locations', () => {
  it.each([
    [
      '<?xml version="1.0"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>b</BucketName></Error>',
      { code: 'NoSuchBucket', message: 'The specified bucket does not exist' },
    ],
    [
      '<Error><Code>AuthorizationHeaderMalformed</Code><Message>the region &apos;us-east-1&apos; is wrong</Message><Region>eu-west-1</Region></Error>',
      { code: 'AuthorizationHeaderMalformed', message: "the region 'us-east-1' is wrong", region: 'eu-west-1' },
    ],
    ['', {}],
    ['<html>Bad Gateway</html>', {}],
  ])('parseS3Error %#', (xml, want) => {
    expect(parseS3Error(xml)).toEqual(want);
  });

  it.each([
    ['<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/"/>', 'us-east-1'],
    ['<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>', 'eu-west-1'],
    ['<LocationConstraint>EU</LocationConstraint>', 'eu-west-1'],
  ])('parseLocation %#', (xml, want) => {
    expect(parseLocation(xml)).toBe(want);
  });
});

describe('judgeKey: the root .sourceignore, then spec.ignore, and nothing else', () => {
  const patterns = bucketPatterns('# comment\n*.md\r\n!keep.md\n/drafts/\n', 'secret-*\n!drafts/ok.yaml\n');
  it.each<[string, KeyVerdict]>([
    ['apps/', 'directory'],
    ['.sourceignore', 'sourceignore'],
    ['apps/.sourceignore', 'fetch'],
    ['README.md', 'ignored'],
    ['apps/README.md', 'ignored'],
    ['apps/keep.md', 'fetch'],
    ['drafts/x.yaml', 'ignored'],
    ['apps/drafts/x.yaml', 'fetch'],
    ['drafts/ok.yaml', 'fetch'],
    ['apps/secret-db.yaml', 'ignored'],
    // No default exclusion for a Bucket: source-controller uses NewMatcher, not NewDefaultMatcher.
    ['logo.png', 'fetch'],
    ['.git/config', 'fetch'],
    ['.github/workflows/ci.yaml', 'fetch'],
    ['.sops.yaml', 'fetch'],
    ['bundle.tar.gz', 'fetch'],
  ])('%s: %s', (key, want) => {
    expect(judgeKey(patterns, key)).toBe(want);
  });

  it('without any pattern every file key is fetched', () => {
    expect(judgeKey(bucketPatterns(undefined, undefined), 'x/y.zip')).toBe('fetch');
  });
});

describe('keys below the root', () => {
  const root = join(tmpdir(), 'kr-bucket-root');
  it.each([
    ['apps/a.yaml', undefined],
    ['a/.b/..c/c..', undefined],
    ['/etc/passwd', 'it is absolute'],
    ['../x.yaml', 'it has a .. segment'],
    ['a/../../x.yaml', 'it has a .. segment'],
    ['a/./b', 'it has an empty or . segment'],
    ['a//b', 'it has an empty or . segment'],
    ['a\0b', 'it holds a NUL character'],
  ])('%j', (key, problem) => {
    expect(keyProblem(key)).toBe(problem);
    if (problem === undefined) expect(objectPath(root, key)).toBe(join(root, ...key.split('/')));
    else expect(() => objectPath(root, key)).toThrow(`object key ${JSON.stringify(key)} is refused: ${problem}`);
  });
});

describe('bucketRevision: sha256 of `<key> <etag>\\n` per key in byte order', () => {
  it.each<[string, Record<string, string>, string]>([
    // `printf '' | sha256sum`: the revision of an empty bucket, as in Flux's docs.
    ['no object', {}, 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    // printf 'apps/a.yaml 0cc175b9c0f1b6a831c399e269772661\napps/b.yaml 92eb5ffee6ae2fec3ad71c777531578f\n' | sha256sum
    [
      'two objects, given out of order',
      { 'apps/b.yaml': '92eb5ffee6ae2fec3ad71c777531578f', 'apps/a.yaml': '0cc175b9c0f1b6a831c399e269772661' },
      'sha256:fd71db70845b888c84981d71c0a5535eef9bcb4e86994930e93be0ea8ebb3860',
    ],
    // printf 'x\xef\xbd\x9e 1\nx\xf0\x9f\x98\x80 2\n' | sha256sum: U+FF5E before U+1F600 in UTF-8
    // (Go's sort.Strings), though UTF-16 (JavaScript's default sort) puts the emoji first.
    [
      'byte order, not UTF-16 order',
      { 'x😀': '2', 'x～': '1' },
      'sha256:9dc557f97bae29dec58a044b2396cc656f899df3596e8ed9854c111900af074e',
    ],
  ])('%s', (_, index, revision) => {
    expect(bucketRevision(new Map(Object.entries(index)))).toBe(revision);
  });

  it('the digested text', () => {
    expect(
      indexText(
        new Map([
          ['b', 'e2'],
          ['a/x', 'e1'],
        ]),
      ),
    ).toBe('a/x e1\nb e2\n');
    expect(['x😀', 'x～', 'X', 'x'].sort(byBytes)).toEqual(['X', 'x', 'x～', 'x😀']);
  });
});

// The environment's AWS credentials go to Amazon S3 only: spec.endpoint is the pull request's.
describe('isAwsS3Endpoint', () => {
  it.each<[string, boolean]>([
    ['s3.amazonaws.com', true],
    ['s3.eu-west-1.amazonaws.com', true],
    ['S3.EU-WEST-1.AMAZONAWS.COM', true],
    ['s3.dualstack.us-east-2.amazonaws.com', true],
    ['s3-fips.us-gov-west-1.amazonaws.com', true],
    ['s3-fips.dualstack.us-east-1.amazonaws.com', true],
    ['s3-us-west-2.amazonaws.com', true],
    ['s3-external-1.amazonaws.com', true],
    ['my-bucket.s3.amazonaws.com', true],
    ['my.dotted.bucket.s3.eu-central-1.amazonaws.com', true],
    ['s3.cn-north-1.amazonaws.com.cn', true],
    ['s3.dualstack.cn-northwest-1.amazonaws.com.cn', true],
    ['bucket.vpce-1a2b3c4d-5e6f.s3.us-east-1.vpce.amazonaws.com', true],
    // Not S3, or not AWS's to answer for.
    ['minio.example.com', false],
    ['127.0.0.1', false],
    ['amazonaws.com', false],
    ['s3.amazonaws.com.evil.com', false],
    ['evil-s3.amazonaws.com', false],
    ['s3.amazonaws.com.', false],
    ['my-lb-123.us-east-1.elb.amazonaws.com', false],
    ['abc123.execute-api.us-east-1.amazonaws.com', false],
    ['ec2-1-2-3-4.compute-1.amazonaws.com', false],
    ['bucket.s3-website-us-east-1.amazonaws.com', false],
    ['bucket.s3-website.us-east-1.amazonaws.com', false],
    ['ap-123.s3-object-lambda.us-east-1.amazonaws.com', false],
    ['s3.evil.amazonaws.com', false],
    ['s3.cn-north-1.amazonaws.com', false],
    ['s3.us-east-1.amazonaws.com.cn', false],
    ['s3-fips.cn-north-1.amazonaws.com.cn', false],
    ['s3.amazonaws.com.cn', false],
    [`${'a'.repeat(250)}.s3.amazonaws.com`, false],
  ])('%s: %s', (host, want) => {
    expect(isAwsS3Endpoint(host)).toBe(want);
  });
});

describe('envCredentialsRefusal', () => {
  it.each<[string, boolean, string | undefined]>([
    ['s3.amazonaws.com', false, undefined],
    ['s3.eu-west-1.amazonaws.com:443', false, undefined],
    ['s3.amazonaws.com', true, 'spec.insecure is true, and they are never sent over plain http'],
    ['s3.amazonaws.com:8443', false, 'spec.endpoint s3.amazonaws.com:8443 names port 8443'],
    [
      'minio.example.com',
      false,
      'spec.endpoint minio.example.com is not an Amazon S3 endpoint (s3.amazonaws.com, s3.<region>.amazonaws.com and the like)',
    ],
    ['[::1]:443', false, 'spec.endpoint [::1]:443 is not an Amazon S3 endpoint'],
  ])('%s (insecure %s)', (endpoint, insecure, want) => {
    const got = envCredentialsRefusal(endpoint, insecure);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(want);
  });
});

// An S3 endpoint is whatever the tree names, and its answers are read in linear time: under a lazy
// regular expression each of these (16 MiB of unclosed tags) takes hours; a hang fails by the timeout.
describe('S3 answers read in linear time', () => {
  const many = (s: string) => s.repeat(Math.floor((16 << 20) / s.length));
  it.each<[string, string, string | number]>([
    ['unclosed Contents', `<ListBucketResult>${many('<Contents>')}`, 0],
    ['unclosed Keys in one Contents', `<ListBucketResult><Contents>${many('<Key>')}</Contents>`, 'without a Key'],
    ['unclosed open tags', `<ListBucketResult>${many('<Contents ')}`, 0],
    ['closing tags without their >', `<ListBucketResult><Contents><Key>k${many('</Key ')}`, 0],
    ['unterminated CDATA', `<ListBucketResult><Contents><Key>${many('<![CDATA[')}</Key></Contents>`, 1],
  ])('%s', (_, xml, want) => {
    if (typeof want === 'number') expect(parseListObjectsV2(xml).objects).toHaveLength(want);
    else expect(() => parseListObjectsV2(xml)).toThrow(want);
  });

  it('an error body of unclosed tags', () => {
    expect(parseS3Error(`<Error>${many('<Code>')}`)).toEqual({});
  });

  it('a spec.endpoint longer than a host name is refused before any host rule reads it', () => {
    expect(endpointProblem(`${'elb'.repeat(100_000)}.amazonaws.com`)).toMatch(
      /characters long, more than host\[:port\]/,
    );
  });
});
