import { describe, expect, it } from 'vitest';
import { parseExecCredential } from '../../src/cluster/exec-credential.js';
import {
  Breaker,
  ClusterUnreachableError,
  CredentialError,
  failureText,
  retryable,
  TimeoutError,
  unauthorizedText,
} from '../../src/cluster/failure.js';
import { formatDuration } from '../../src/util/duration.js';
import { apiErrorFrom } from '../../src/cluster/errors.js';

const errno = (code: string, message = `${code} happened`) => Object.assign(new Error(message), { code });
const timeouts = { connectMs: 2000, requestMs: 30_000 };

describe('retryable', () => {
  it.each<[string, unknown, number, boolean]>([
    ['a refused connection', errno('ECONNREFUSED'), 1, true],
    ['a reset connection', errno('ECONNRESET'), 4, true],
    ['a refused connection on the last attempt', errno('ECONNREFUSED'), 5, false],
    ['a connect timeout, first attempt', new TimeoutError('connect-timeout', 2000, false), 1, true],
    ['a connect timeout, second attempt', new TimeoutError('connect-timeout', 2000, false), 2, false],
    ['a request timeout', new TimeoutError('request-timeout', 30_000, true), 1, false],
    ['a request timeout while connecting', new TimeoutError('request-timeout', 30_000, false), 1, false],
    ['a credential failure', new CredentialError('plugin failed'), 1, false],
    ['an untrusted certificate', errno('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 1, false],
    ['an unknown host', errno('ENOTFOUND'), 1, false],
  ])('%s → %s', (_, err, attempt, expected) => {
    expect(retryable(err, attempt)).toBe(expected);
  });
});

describe('failureText', () => {
  it.each<[string, unknown, number, string]>([
    [
      'a connect timeout after two attempts',
      new TimeoutError('connect-timeout', 2000, false),
      2,
      'could not connect within 2s (connect-timeout) (2 attempts): check the server address in the kubeconfig and that the API server can be reached from here',
    ],
    [
      'a request timeout',
      new TimeoutError('request-timeout', 30_000, true),
      1,
      'no answer within 30s (request-timeout): the API server accepted the connection but did not answer',
    ],
    [
      'a request timeout on a retry, shown as set',
      new TimeoutError('request-timeout', 12_000, true),
      3,
      'no answer within 30s (request-timeout) (3 attempts): the API server accepted the connection but did not answer',
    ],
    [
      'a request timeout that ran out while connecting',
      new TimeoutError('request-timeout', 30_000, false),
      1,
      'could not connect within 30s (request-timeout): check the server address in the kubeconfig and that the API server can be reached from here',
    ],
    [
      'a credential failure, as it is',
      new CredentialError('kubeconfig user "u": boom'),
      1,
      'kubeconfig user "u": boom',
    ],
    [
      'a refused connection after five attempts',
      errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'),
      5,
      'connect ECONNREFUSED 127.0.0.1:1 (5 attempts)',
    ],
    [
      "an untrusted certificate, without Node's advice about system CAs",
      errno(
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca',
      ),
      1,
      "unable to verify the first certificate: the server's certificate is not trusted; check the cluster's certificate-authority-data (or certificate-authority) and tls-server-name in the kubeconfig",
    ],
    [
      'an untrusted certificate, with what to check',
      errno('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      1,
      "unable to verify the first certificate: the server's certificate is not trusted; check the cluster's certificate-authority-data (or certificate-authority) and tls-server-name in the kubeconfig",
    ],
  ])('%s', (_, err, attempts, expected) => {
    expect(failureText(err, attempts, timeouts)).toBe(expected);
  });

  it('cuts a very long message', () => {
    const text = failureText(errno('EPROTO', 'x'.repeat(10_000)), 1, timeouts);
    expect(text.length).toBeLessThan(2100);
    expect(text).toMatch(/\[… 8,000 more characters left out\]$/);
  });
});

describe('Breaker', () => {
  it('passes until tripped, then fails every check with the first error', () => {
    const breaker = new Breaker();
    expect(() => {
      breaker.check();
    }).not.toThrow();
    const first = breaker.trip(new Error('GET /api to https://k: refused'));
    const second = breaker.trip(new Error('GET /apis to https://k: refused too'));
    expect(first).toBeInstanceOf(ClusterUnreachableError);
    expect(second.message).toBe('GET /api to https://k: refused');
    expect(() => {
      breaker.check();
    }).toThrow('GET /api to https://k: refused');
  });

  it('stops the requests in flight when it trips, and forgets finished ones', () => {
    const breaker = new Breaker();
    const stopped: string[] = [];
    breaker.track((e) => stopped.push(`a: ${e.message}`));
    const untrack = breaker.track((e) => stopped.push(`b: ${e.message}`));
    untrack();
    breaker.trip(new Error('gone'));
    expect(stopped).toEqual(['a: gone']);
  });
});

describe('parseExecCredential', () => {
  it.each<[string, string, ReturnType<typeof parseExecCredential>]>([
    [
      'a token with an expiry',
      JSON.stringify({ status: { token: 'abc', expirationTimestamp: '2030-01-01T00:00:00Z' } }),
      { token: 'abc', expiresAt: Date.parse('2030-01-01T00:00:00Z') },
    ],
    [
      'a client certificate and key',
      JSON.stringify({ status: { clientCertificateData: 'CERT', clientKeyData: 'KEY' } }),
      { clientCertificateData: 'CERT', clientKeyData: 'KEY' },
    ],
    ['nothing', '', 'printed nothing on stdout: it should print an ExecCredential (JSON)'],
    ['not JSON', 'token: abc', 'printed something other than JSON on stdout: it should print an ExecCredential'],
    [
      'JSON without status',
      '{"kind":"ExecCredential"}',
      'printed JSON without a status: it should print an ExecCredential with status.token or a client certificate',
    ],
    [
      'a certificate without its key',
      JSON.stringify({ status: { clientCertificateData: 'CERT' } }),
      'printed an ExecCredential without status.token or status.clientCertificateData and status.clientKeyData',
    ],
  ])('%s', (_, stdout, expected) => {
    expect(parseExecCredential(stdout)).toEqual(expected);
  });

  it('never quotes what the plugin printed', () => {
    expect(parseExecCredential('Bearer s3cr3t-token-value')).not.toContain('s3cr3t');
  });
});

describe('formatDuration (Go time.Duration, to the second above a minute)', () => {
  it.each([
    [250, '250ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [59_900, '59.9s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_570_000, '59m30s'],
    [3_600_000, '1h0m0s'],
    [5_430_000, '1h30m30s'],
  ])('%i ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('apiErrorFrom', () => {
  const status = (message: string) => JSON.stringify({ kind: 'Status', reason: 'Invalid', message });
  it.each<[string, number, string, string]>([
    ['a Status', 422, status('name: Invalid value'), 'PATCH /x: name: Invalid value'],
    ['a short text body', 502, 'Bad Gateway\n', 'PATCH /x: HTTP 502: Bad Gateway'],
    ['an empty body', 503, '', 'PATCH /x: HTTP 503'],
    [
      'a long HTML page, cut with a count',
      502,
      `<html>${'x'.repeat(1000)}</html>`,
      `PATCH /x: HTTP 502: <html>${'x'.repeat(294)} [… 713 more characters left out]`,
    ],
    [
      'a huge Status message, cut with a count',
      422,
      status('y'.repeat(50_000)),
      `PATCH /x: ${'y'.repeat(10_000)} [… 40,000 more characters left out]`,
    ],
  ])('%s', (_, code, body, message) => {
    const err = apiErrorFrom(code, body, 'PATCH /x');
    expect(err.status).toBe(code);
    expect(err.message).toBe(message);
  });
});

describe('unauthorizedText', () => {
  it.each<[string, string | undefined, string]>([
    [
      'a named user',
      'admin',
      'Unauthorized: the API server did not accept the credentials of kubeconfig user "admin": check that its token, client certificate or exec plugin is current and meant for this cluster',
    ],
    [
      'no user',
      undefined,
      "Unauthorized: the API server does not accept anonymous requests, and the kubeconfig's context names no user: add a user with credentials",
    ],
  ])('%s', (_, user, expected) => {
    expect(unauthorizedText('Unauthorized', user)).toBe(expected);
  });
});
