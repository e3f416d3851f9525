/**
 * A safe tar extractor (gzip-compressed or plain) for source artifacts: OCI layers and tarballs an
 * ArtifactGenerator extracts. It reads ustar and GNU headers, GNU long names (`L`) and pax extended
 * headers (`x`: `path` and `size` are used; a global `g` header is read and, as Go's archive/tar,
 * which Flux extracts with, does, not applied to the entries that follow), and writes regular files
 * (mode 0755 when the archive marks them executable, else 0644) and directories (0755). It never
 * creates a link: symlinks (as source-controller's extraction of an OCI layer, with WithSkipSymlinks,
 * does), hard links, devices and FIFOs are skipped, where fluxcd/pkg/tar fails on the last three, and
 * on symlinks too without that option (kustomize-controller's extraction of an artifact). Paths are
 * refused, naming the entry, when absolute, when they hold a `..` component (as fluxcd/pkg/tar
 * refuses `../`), a backslash or a NUL. The total size of the files and the number of entries are
 * capped, and so is how much gunzip may inflate; each file written is also taken from the run's
 * budget when the caller passes one (`spend`).
 */
import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzip } from 'node:zlib';

export interface TarLimits {
  /** The most bytes the files may hold in all (default 256 MiB). */
  maxBytes?: number;
  /** The most entries (files, directories and skipped ones) the archive may hold (default 20,000). */
  maxFiles?: number;
  /**
   * Called before each regular file is written with its size and 1 (the run's budget, budget.ts):
   * throws to stop the extraction.
   */
  spend?: (bytes: number, files: number) => void;
}

export const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 20_000;

const BLOCK = 512;

/** Whether `buf` starts with gzip's magic bytes. */
export function isGzip(buf: Uint8Array): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
}

function gunzipCapped(data: Buffer, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gunzip(data, { maxOutputLength: max }, (err, out) => {
      if (err === null) resolve(out);
      else if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        reject(new Error(`the archive inflates to more than ${max} bytes`));
      } else reject(new Error(`the archive is not valid gzip: ${err.message}`));
    });
  });
}

/** A NUL-terminated header field as text. */
function field(h: Buffer, start: number, len: number): string {
  const f = h.subarray(start, start + len);
  const end = f.indexOf(0);
  return f.subarray(0, end === -1 ? f.length : end).toString('utf8');
}

/** A numeric header field: octal (NUL/space padded), or base-256 when its first byte has the high bit. */
function numeric(h: Buffer, start: number, len: number, what: string): number {
  const f = h.subarray(start, start + len);
  if ((f[0]! & 0x80) !== 0) {
    if ((f[0]! & 0x40) !== 0) throw new Error(`negative ${what} in a tar header`);
    let n = f[0]! & 0x3f;
    for (let i = 1; i < f.length; i++) {
      n = n * 256 + f[i]!;
      if (!Number.isSafeInteger(n)) throw new Error(`${what} too large in a tar header`);
    }
    return n;
  }
  const text = field(h, start, len).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`invalid ${what} ${JSON.stringify(text)} in a tar header`);
  return parseInt(text, 8);
}

/** Whether the header's checksum (unsigned, or signed as some old tars wrote it) is right. */
function checksumOk(h: Buffer): boolean {
  const want = numeric(h, 148, 8, 'checksum');
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : h[i]!;
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  return want === unsigned || want === signed;
}

/** The records of a pax extended header (`LEN key=value\n` each). */
export function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    if (data[pos] === 0) break;
    const space = data.indexOf(0x20, pos);
    const lenText = space === -1 ? '' : data.subarray(pos, space).toString('latin1');
    const len = /^[1-9]\d{0,8}$/.test(lenText) ? Number(lenText) : NaN;
    if (!(len > 0) || pos + len > data.length || data[pos + len - 1] !== 0x0a) {
      throw new Error('malformed pax extended header');
    }
    const record = data.subarray(space + 1, pos + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq <= 0) throw new Error('malformed pax extended header');
    out[record.slice(0, eq)] = record.slice(eq + 1);
    pos += len;
  }
  return out;
}

/**
 * The path components of an entry's name, `./` and empty components dropped; throws naming it when
 * it is absolute or holds `..`, a backslash or a NUL.
 */
export function safeParts(name: string): string[] {
  const why = name.startsWith('/')
    ? 'an absolute path'
    : name.includes('\0')
      ? 'a path with a NUL'
      : name.includes('\\')
        ? 'a path with a backslash'
        : name.split('/').includes('..')
          ? 'a path with ".."'
          : undefined;
  if (why !== undefined) throw new Error(`the archive entry ${JSON.stringify(name)} is refused: ${why}`);
  return name.split('/').filter((p) => p !== '' && p !== '.');
}

type Kind = 'file' | 'dir' | 'skip';

function kindOf(type: string): Kind {
  if (type === '0' || type === '\0' || type === '' || type === '7') return 'file';
  if (type === '5') return 'dir';
  // 1 hard link, 2 symlink, 3/4 devices, 6 FIFO, and any type this reader does not know.
  return 'skip';
}

/**
 * Extracts the tar (gzip-compressed or not) `data` into the existing directory `dir`; returns the
 * relative (`/`-separated) paths of the files written, in archive order, each once. Throws a sentence
 * on a malformed archive, a refused path or a limit passed; what was written until then stays.
 */
export async function extractTarGz(data: Buffer, dir: string, limits: TarLimits = {}): Promise<string[]> {
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxFiles = limits.maxFiles ?? DEFAULT_MAX_FILES;
  // Headers and padding come on top of the files' bytes: 1.5 KiB an entry is plenty for ustar ones.
  const inflateCap = Math.min(maxBytes + (maxFiles + 64) * 3 * BLOCK + (1 << 20), 2 ** 32);
  const tar = isGzip(data) ? await gunzipCapped(data, inflateCap) : data;

  const written: string[] = [];
  const seen = new Set<string>();
  const dirs = new Set<string>();
  let total = 0;
  let entries = 0;
  let longName: string | undefined;
  let pax: Record<string, string> = {};

  /** Makes the directories of `parts` (each checked to be a real directory, never a link). */
  const ensureDir = async (parts: readonly string[]) => {
    for (let i = 1; i <= parts.length; i++) {
      const rel = parts.slice(0, i).join('/');
      if (dirs.has(rel)) continue;
      const abs = join(dir, ...parts.slice(0, i));
      const st = await lstat(abs).catch(() => undefined);
      if (st === undefined) await mkdir(abs, { mode: 0o755 });
      else if (!st.isDirectory()) {
        throw new Error(`the archive entry ${JSON.stringify(rel)} is both a file and a directory`);
      }
      dirs.add(rel);
    }
  };

  let pos = 0;
  for (;;) {
    if (pos === tar.length) break; // no end-of-archive blocks: Go's archive/tar reads that as the end too
    if (pos + BLOCK > tar.length) throw new Error('the tar archive is truncated');
    const h = tar.subarray(pos, pos + BLOCK);
    if (h.every((b) => b === 0)) break;
    if (!checksumOk(h)) throw new Error(`not a tar archive (bad header checksum at offset ${pos})`);
    const type = String.fromCharCode(h[156]!);
    let size = numeric(h, 124, 12, 'size');
    if (type !== 'x' && type !== 'g' && pax['size'] !== undefined) {
      if (!/^\d+$/.test(pax['size'])) throw new Error('malformed pax size');
      size = Number(pax['size']);
    }
    const start = pos + BLOCK;
    if (!Number.isSafeInteger(size) || start + size > tar.length) {
      throw new Error('the tar archive is truncated');
    }
    const body = tar.subarray(start, start + size);
    pos = start + Math.ceil(size / BLOCK) * BLOCK;

    if (type === 'L') {
      longName = field(body, 0, body.length);
      continue;
    }
    if (type === 'K') continue; // a GNU long link name: links are skipped
    if (type === 'x') {
      pax = parsePax(body);
      continue;
    }
    if (type === 'g') {
      parsePax(body);
      continue;
    }

    const magic = h.subarray(257, 263).toString('latin1');
    const prefix = magic === 'ustar\0' ? field(h, 345, 155) : '';
    const name = pax['path'] ?? longName ?? (prefix !== '' ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    longName = undefined;
    pax = {};

    entries++;
    if (entries > maxFiles) throw new Error(`the archive holds more than ${maxFiles} entries`);
    const parts = safeParts(name);
    const kind = kindOf(type);
    if (kind === 'skip' || parts.length === 0) continue;
    if (kind === 'dir') {
      await ensureDir(parts);
      continue;
    }
    total += size;
    if (total > maxBytes) throw new Error(`the archive's files hold more than ${maxBytes} bytes`);
    limits.spend?.(size, 1);
    await ensureDir(parts.slice(0, -1));
    const rel = parts.join('/');
    if (dirs.has(rel)) throw new Error(`the archive entry ${JSON.stringify(rel)} is both a directory and a file`);
    const mode = (numeric(h, 100, 8, 'mode') & 0o111) !== 0 ? 0o755 : 0o644;
    const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC | fsConstants.O_NOFOLLOW;
    const fh = await open(join(dir, ...parts), flags, mode).catch((err: unknown) => {
      throw new Error(`the archive entry ${JSON.stringify(rel)} could not be written: ${(err as Error).message}`, {
        cause: err,
      });
    });
    try {
      await fh.writeFile(body);
      await fh.chmod(mode);
    } finally {
      await fh.close();
    }
    if (!seen.has(rel)) {
      seen.add(rel);
      written.push(rel);
    }
  }
  return written;
}
