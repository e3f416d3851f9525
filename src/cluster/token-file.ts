/**
 * A kubeconfig user's `tokenFile` (client-node's `token-file` too), read as client-go reads it: the
 * file's token (trimmed) is the bearer token, read again at most once a minute so that a token the
 * file rotates (a projected ServiceAccount token) is picked up in a long run; when a later read
 * fails, the last token read is kept. With `token` set as well, the file's token wins while the
 * file can be read, and `token` is the fallback (client-go's bearer round tripper).
 */
import type { KubeConfig, User } from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import type https from 'node:https';

/** How long a token read from its file is used before the file is read again (client-go: one minute). */
export const TOKEN_FILE_PERIOD_MS = 60_000;

type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** Answers for the users with a token file (by user name: the absolute path, and the static token, if any). */
export function installTokenFiles(
  kc: KubeConfig,
  files: ReadonlyMap<string, { path: string; token?: string }>,
  now: () => number = Date.now,
): void {
  if (files.size > 0) kc.addAuthenticator(new TokenFiles(files, now));
}

class TokenFiles implements Authenticator {
  private readonly read = new Map<string, { token: string; at: number }>();

  constructor(
    private readonly files: ReadonlyMap<string, { path: string; token?: string }>,
    private readonly now: () => number,
  ) {}

  isAuthProvider(user: User): boolean {
    return this.files.has(user.name);
  }

  applyAuthentication(user: User, opts: https.RequestOptions): Promise<void> {
    const token = this.token(user.name);
    if (token !== undefined) {
      opts.headers ??= {};
      (opts.headers as Record<string, string>)['Authorization'] = `Bearer ${token}`;
    }
    return Promise.resolve();
  }

  private token(name: string): string | undefined {
    const file = this.files.get(name)!;
    const last = this.read.get(name);
    if (last && this.now() - last.at < TOKEN_FILE_PERIOD_MS) return last.token;
    try {
      const token = readFileSync(file.path, 'utf8').trim();
      if (token !== '') {
        this.read.set(name, { token, at: this.now() });
        return token;
      }
    } catch {
      // The last token read, or the static token (the file was readable when the kubeconfig was loaded).
    }
    return last?.token ?? file.token;
  }
}
