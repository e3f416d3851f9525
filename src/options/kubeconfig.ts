import { isAbsolute, resolve } from 'node:path';
import type { KubeconfigSource } from '../cluster/kubeconfig.js';
import { UserError } from '../util/user-error.js';

/**
 * The kubeconfig input takes the file's text, the file base64-encoded (as many store it in a
 * secret), or a path (relative to the workspace). Text is recognised by being multi-line or
 * starting like YAML/JSON; empty means KUBECONFIG or ~/.kube/config. A value that looks like
 * base64 but is not a kubeconfig once decoded is refused without quoting it.
 */
export function kubeconfigSource(value: string, root: string): KubeconfigSource {
  const v = value.trim();
  if (v === '') return { kind: 'default' };
  const compact = v.replace(/\s+/g, '');
  if (compact.length >= 32 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact) && compact.length % 4 === 0) {
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    if (looksLikeKubeconfig(decoded.trim())) return { kind: 'content', content: decoded };
    throw new UserError(
      'input kubeconfig looks base64-encoded, but decoded it is not a kubeconfig: pass the decoded file ' +
        "(its YAML text, e.g. `${{ secrets.KUBECONFIG }}` holding the file's content) or a path in the workspace",
    );
  }
  if (looksLikeKubeconfig(v)) return { kind: 'content', content: value };
  if (v.length > 1024 || /[\0\r\n]/.test(v)) {
    throw new UserError(
      "input kubeconfig is neither a kubeconfig (YAML or JSON) nor a file path: pass the file's content",
    );
  }
  return { kind: 'path', path: isAbsolute(v) ? v : resolve(root, v) };
}

function looksLikeKubeconfig(text: string): boolean {
  return (
    text.includes('\n') ||
    text.startsWith('{') ||
    /^(apiVersion|kind|clusters|contexts|users|current-context|preferences)\s*:/.test(text)
  );
}
