/** The workflow run's event payload (the edge: GITHUB_EVENT_PATH's file), for the action and the CLI. */
import { readFile } from 'node:fs/promises';

/** The payload at `path` (none when there is no path), or why it could not be read. */
export async function readEventFile(path: string | undefined): Promise<{ event?: unknown; error?: string }> {
  if (!path) return {};
  try {
    return { event: JSON.parse(await readFile(path, 'utf8')) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
