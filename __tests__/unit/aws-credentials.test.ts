// The environment's static AWS credentials (src/aws/sigv4.ts): the first link of the KMS key
// service's chain and of a Bucket's, read the same way by both.
import { describe, expect, it } from 'vitest';
import { environmentCredentials } from '../../src/aws/sigv4.js';

describe('environmentCredentials', () => {
  it.each<[string, NodeJS.ProcessEnv, ReturnType<typeof environmentCredentials>]>([
    [
      'both keys',
      { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret' },
      { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    ],
    [
      'both keys and a session token',
      { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'tok' },
      { accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'tok' },
    ],
    ['the key id alone', { AWS_ACCESS_KEY_ID: 'AKID' }, undefined],
    ['the secret alone', { AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'tok' }, undefined],
    ['empty values', { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' }, undefined],
    ['nothing', {}, undefined],
  ])('%s', (_why, env, want) => {
    expect(environmentCredentials(env)).toEqual(want);
  });
});
