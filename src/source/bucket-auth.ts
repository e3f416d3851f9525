/**
 * A Bucket's credentials (bucket.ts): spec.secretRef's `accesskey` and `secretkey`, else for provider
 * aws the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN variables, but only for an
 * Amazon S3 endpoint over https (s3.ts envCredentialsRefusal); else none, and the requests go
 * unsigned. Each value is masked (opts.secret) as soon as it is read; `note` says where they came
 * from, or why there were none, for a 401 or 403's message.
 */
import { environmentCredentials } from '../aws/sigv4.js';
import type { BucketDef } from '../flux/source-defs.js';
import { envCredentialsRefusal, type S3Auth } from './s3.js';

/** What finding the credentials needs (bucket.ts's BucketFetchOptions hold it). */
export interface BucketAuthOptions {
  /** Masks a value in every later log line. */
  secret: (value: string) => void;
  /** Reads a Secret's data, decoded (spec.secretRef, in the Bucket's namespace). */
  readSecret?: (namespace: string, name: string) => Promise<Record<string, string>>;
  /** The environment (process.env): AWS_ACCESS_KEY_ID and the like, for provider aws. */
  env?: Readonly<Record<string, string | undefined>>;
  log?: (line: string) => void;
  /** Why no credential at all may be used (the trust rule, trust.ts): the requests are unsigned. */
  anonymous?: string;
}

export interface Auth extends S3Auth {
  /** Where the credentials come from, or why there are none: said when the server refuses. */
  note: string;
}

export async function authFor(def: BucketDef, aws: boolean, opts: BucketAuthOptions): Promise<Auth> {
  if (opts.anonymous !== undefined) return { note: `the requests were unsigned: ${opts.anonymous}`, secrets: [] };
  const notes: string[] = [];
  if (def.secretRef !== undefined) {
    const ref = `spec.secretRef ${def.secretRef}`;
    let data: Record<string, string> | undefined;
    if (opts.readSecret === undefined) notes.push(`${ref} could not be read (no cluster to read it from)`);
    else {
      try {
        data = await opts.readSecret(def.namespace, def.secretRef);
      } catch (err) {
        notes.push(`${ref} could not be read: ${(err as Error).message}`);
      }
    }
    if (data !== undefined) {
      for (const v of Object.values(data)) if (v.trim() !== '') opts.secret(v);
      const accessKey = data['accesskey'];
      const secretKey = data['secretkey'];
      if (accessKey === undefined || secretKey === undefined) {
        throw new Error(`invalid '${def.secretRef}' secret data: required fields 'accesskey' and 'secretkey'`);
      }
      // As minio-go's static credentials: both or none (anonymous), and no fallback past a Secret.
      if (accessKey === '' || secretKey === '') {
        return { note: `the requests were unsigned: ${ref} has an empty accesskey or secretkey`, secrets: [] };
      }
      return {
        creds: { accessKeyId: accessKey, secretAccessKey: secretKey },
        note: `signed with the accesskey and secretkey of ${ref}`,
        secrets: [secretKey],
      };
    }
  }
  if (aws) {
    const env = opts.env ?? {};
    const fromEnv = environmentCredentials(env);
    // The runner's credentials go to Amazon S3 only: spec.endpoint is the pull request's to choose.
    // Tests admit their loopback S3 emulator by name (KR_TEST_S3_ENDPOINTS, the runner's environment, never the tree's).
    const admitted =
      (env['KR_TEST_S3_ENDPOINTS'] ?? '').split(',').includes(def.endpoint) &&
      /^(127\.\d+\.\d+\.\d+|localhost)(:\d+)?$/.test(def.endpoint);
    const refusal = admitted ? undefined : envCredentialsRefusal(def.endpoint, def.insecure === true);
    if (fromEnv && refusal !== undefined) {
      const note = `the environment's AWS credentials are not sent: ${refusal}; give the Bucket a spec.secretRef for this endpoint`;
      opts.log?.(`Bucket ${def.namespace}/${def.name}: ${note}; fetching it unsigned`);
      notes.push(note);
    } else if (fromEnv) {
      const { accessKeyId, secretAccessKey, sessionToken } = fromEnv;
      for (const v of [accessKeyId, secretAccessKey, sessionToken]) if (v) opts.secret(v);
      return {
        creds: fromEnv,
        note: 'signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        secrets: [secretAccessKey, sessionToken ?? ''],
      };
    }
    notes.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  } else if (def.secretRef === undefined) {
    notes.push('no spec.secretRef');
  }
  return { note: `the requests were unsigned: ${notes.join('; ')}`, secrets: [] };
}
