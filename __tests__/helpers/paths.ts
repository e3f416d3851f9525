import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** Where `test/cluster/build.sh` links the test cluster binary and the pinned tools. */
export const TOOLS = join(REPO, 'test', 'cluster', 'bin');
export const KUSTOMIZE = join(TOOLS, 'kustomize');
/** The Node 24 that the tests run on and that GitHub runs the action with. */
export const NODE = process.execPath;
