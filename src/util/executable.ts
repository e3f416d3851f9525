import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * The file spawn would run for `bin`: `bin` itself when it names a path, else the first executable
 * of that name on `env`'s PATH; undefined when there is none.
 */
export async function findExecutable(bin: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (bin === '') return undefined;
  const executable = (p: string) =>
    access(p, constants.X_OK).then(
      () => true,
      () => false,
    );
  if (bin.includes('/')) return (await executable(bin)) ? bin : undefined;
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && (await executable(join(dir, bin)))) return join(dir, bin);
  }
  return undefined;
}
