import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root. */
export const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** Where `test/cluster/build.sh` links the test cluster binary and the pinned tools. */
export const TOOLS = join(REPO, 'test', 'cluster', 'bin');
export const KUSTOMIZE = join(TOOLS, 'kustomize');
/** The Node 24 that the tests run on and that GitHub runs the action with. */
export const NODE = process.execPath;
/**
 * The test cluster binary the integration run starts: `testcluster` (test/cluster/go.mod's Kubernetes),
 * or another release build.sh links beside it, named by KR_TESTCLUSTER (`testcluster-v1.34`).
 */
export const TESTCLUSTER = join(TOOLS, testclusterName(process.env['KR_TESTCLUSTER']));

function testclusterName(name: string | undefined): string {
  if (name === undefined || name === '') return 'testcluster';
  if (!/^testcluster(-v\d+\.\d+)?$/.test(name)) {
    throw new Error(`KR_TESTCLUSTER=${JSON.stringify(name)}: use a name build.sh links, e.g. testcluster-v1.34`);
  }
  return name;
}
