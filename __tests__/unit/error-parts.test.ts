// Errors that keep their parts (as fluxcd/pkg's DryRunErr): each carries what it is about as
// properties and builds its message from them, so that nothing parses a message back; and the
// option errors are UserErrors (util/user-error.ts), mistakes the user must fix.
import { describe, expect, it } from 'vitest';
import { apiErrorFrom } from '../../src/cluster/errors.js';
import { parseYamlValue, YamlError } from '../../src/objects/yaml.js';
import { parseFlags, pairFlags, rawFromFlags } from '../../src/options/flags.js';
import { kubeconfigSource } from '../../src/options/kubeconfig.js';
import { ReportFileError } from '../../src/report/file-error.js';
import { BucketStepError } from '../../src/source/bucket.js';
import { S3Failure } from '../../src/source/s3.js';
import { mergeVariables, parseVarFlags, parseVarsInput, VariableError } from '../../src/substitute/variables.js';
import { isUserError } from '../../src/util/user-error.js';

/** What `fn` throws. */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing was thrown');
}

describe('VariableError', () => {
  it.each<[string, () => unknown, string, string]>([
    ['a --var without =', () => parseVarFlags(['oops']), '--var oops', 'expected name=value'],
    [
      'a --secret-var name',
      () => parseVarFlags(['1x='], 'secret-var'),
      '--secret-var 1x=',
      `'1x' var name is invalid (letters, digits and "_", not starting with a digit)`,
    ],
    [
      'a ConfigMap key',
      () => mergeVariables([{ source: 'ConfigMap flux-system/vars', vars: { 'a-b': 'v' } }]),
      'ConfigMap flux-system/vars',
      `'a-b' var name is invalid (letters, digits and "_", not starting with a digit)`,
    ],
    [
      'the vars input, duplicate keys',
      () => parseVarsInput('a: 1\na: 2\n', 'vars'),
      'input "vars"',
      'not valid YAML or JSON: key "a" appears twice in one mapping (line 2); keep one',
    ],
    [
      'the vars input, two documents',
      () => parseVarsInput('a: 1\n---\nb: 2\n', 'vars'),
      'input "vars"',
      'not valid YAML or JSON: holds 2 YAML documents; it must hold one',
    ],
    [
      'the vars input, a list',
      () => parseVarsInput('- a\n', 'vars'),
      'input "vars"',
      'expected a map of variable names to values, e.g. "cluster_env: production"',
    ],
  ])('%s', (_, fn, source, problem) => {
    const err = thrown(fn);
    expect(err).toBeInstanceOf(VariableError);
    expect(err).toMatchObject({ source, problem, message: `${source}: ${problem}` });
    expect(isUserError(err)).toBe(true);
  });
});

describe('YamlError', () => {
  it.each<[string, string, number | undefined, string]>([
    ['a: 1\na: 2\n', 'f.yaml', 1, 'key "a" appears twice in one mapping (line 2)'],
    ['a: 1\n---\nb: 2\n', 'f.yaml', undefined, 'holds 2 YAML documents; it must hold one'],
    ['a: \u0001\n', 'f.yaml', undefined, 'control character U+0001 at line 1'],
    ['a: &x [*x]\n', 'f.yaml', 1, 'the YAML alias *x at line 1 lies inside the node it names'],
  ])('%j', (text, source, document, problem) => {
    const e = thrown(() => parseYamlValue(text, source)) as Error & Partial<YamlError>;
    expect(e).toBeInstanceOf(YamlError);
    expect(e.source).toBe(source);
    expect(e.document).toBe(document);
    expect(e.problem).toContain(problem);
    expect(e.message).toBe(`${source}${document === undefined ? '' : `, document ${document}`}: ${e.problem ?? ''}`);
  });
});

describe('option errors are UserErrors', () => {
  const read = () => Promise.reject(Object.assign(new Error('no'), { code: 'ENOENT' }));
  it.each<[string, () => unknown]>([
    ['a base64 kubeconfig that is none', () => kubeconfigSource('QUJD'.repeat(10), '/w')],
    ['a kubeconfig that is neither text nor path', () => kubeconfigSource('x'.repeat(2000), '/w')],
    ['a --git-credential without =', () => pairFlags('git-credential', ['token'])],
  ])('%s', (_, fn) => {
    expect(isUserError(thrown(fn))).toBe(true);
  });
  it.each<[string, string[], string]>([
    ['--secret-var without =', ['--secret-var', 'hunter2hunter2'], '--secret-var: expected name=value'],
    [
      '--secret-var with a bad name',
      ['--secret-var', '1x=hunter2hunter2'],
      "--secret-var 1x=: '1x' var name is invalid",
    ],
    ['--var with a bad name', ['--var', '1x=y'], "--var 1x=y: '1x' var name is invalid"],
    ['an unreadable key file', ['--sops-pgp-key', 'missing.asc'], '--sops-pgp-key: cannot read missing.asc: ENOENT'],
  ])('%s', async (_, argv, message) => {
    const err = (await rawFromFlags(parseFlags(argv).values, read).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain(message);
    expect(isUserError(err)).toBe(true);
  });
});

describe('BucketStepError', () => {
  const failure = (code: string) => new S3Failure(404, code, {}, `HTTP 404 (${code})`);
  it.each<[string, unknown, boolean, string]>([
    [
      'a missing bucket, in Flux’s words',
      failure('NoSuchBucket'),
      true,
      "bucket 'b' not found (listing the objects: HTTP 404 (NoSuchBucket))",
    ],
    ['a missing key', failure('NoSuchKey'), false, 'listing the objects: HTTP 404 (NoSuchKey)'],
    ['any other error', new Error('ECONNRESET'), false, 'listing the objects: ECONNRESET'],
  ])('%s', (_, cause, missing, message) => {
    const err = new BucketStepError('listing the objects', 'b', cause);
    expect(err).toMatchObject({ step: 'listing the objects', bucketName: 'b', missing, message, cause });
  });
});

describe('ReportFileError.of', () => {
  it.each<[string, unknown, string]>([
    ['one of its own', new ReportFileError('a.json', 'not JSON'), 'a.json: not JSON'],
    ['another error', new Error('over 32 MiB'), 'a.json: over 32 MiB'],
    ['a thrown string', 'odd', 'a.json: odd'],
  ])('%s', (_, err, message) => {
    const e = ReportFileError.of('a.json', err);
    expect(e.message).toBe(message);
    expect(e.file).toBe('a.json');
  });
});

describe('ApiError', () => {
  it.each<[string, number, string, string]>([
    [
      'a Status: its message',
      401,
      JSON.stringify({ kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' }),
      'Unauthorized',
    ],
    ['a page that is not a Status: its start', 502, '<html>Bad Gateway</html>\n', 'HTTP 502: <html>Bad Gateway</html>'],
    ['an empty answer', 503, '', 'HTTP 503'],
  ])('keeps what the server said apart from the request: %s', (_what, status, body, said) => {
    const err = apiErrorFrom(status, body, 'GET /api/v1/namespaces');
    expect(err.said).toBe(said);
    expect(err.message).toBe(`GET /api/v1/namespaces: ${said}`);
  });
});
