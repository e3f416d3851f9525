/** dotenv (`stores/dotenv/store.go`). */
import { goValToString } from '../goformat.js';
import { unflattenMetadata } from '../metadata.js';
import { leaf, type CommentNode, type MapEntry, type MapNode } from '../tree.js';
import { SopsError, type DecryptOptions } from '../types.js';
import { decryptLoaded } from '../walk.js';

/** Decrypts a dotenv file: `sops_`-prefixed keys are the flattened metadata; written back as `sops decrypt` does. */
export async function decryptDotenv(text: string, opts: DecryptOptions): Promise<string> {
  const items: (MapEntry | CommentNode)[] = [];
  const meta: [string, string][] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    if (line.startsWith('#')) {
      items.push({ t: 'comment', text: line.slice(1) });
      return;
    }
    const eq = line.indexOf('=');
    if (eq === -1) throw new SopsError(`invalid dotenv input: line ${i + 1} has no '='`);
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1).replaceAll('\\n', '\n');
    if (key.startsWith('sops_')) meta.push([key.slice('sops_'.length), value]);
    else items.push({ t: 'entry', key, value: leaf(value) });
  });
  if (meta.length === 0) throw new SopsError('sops metadata not found');
  const branch: MapNode = { t: 'map', items };
  await decryptLoaded([branch], unflattenMetadata(meta), opts);
  let out = '';
  for (const item of items) {
    if (item.t === 'comment') {
      out += `#${item.text}\n`;
      continue;
    }
    const node = item.value;
    if (node.t === 'map' || node.t === 'list')
      throw new SopsError(`cannot use a complex value in a dotenv file (key ${item.key})`);
    const value = node.t === 'leaf' ? node.value : '';
    out += `${item.key}=${typeof value === 'string' ? value.replaceAll('\n', '\\n') : goValToString(value)}\n`;
  }
  return out;
}
