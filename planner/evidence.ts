import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';

/**
 * Where task outputs and their evidence go. The S3 implementation (versioned,
 * Object Lock) lives with the other AWS adapters; the planner only needs put.
 */
export interface EvidenceSink {
  put(key: string, body: Uint8Array | string, contentType: string): Promise<void>;
}

/** Evidence keys are relative paths of safe segments: no "..", no absolute paths, nothing a vendor string could bend. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function assertEvidenceKey(key: string): void {
  const segments = key.split('/');
  if (segments.length === 0 || segments.some((s) => !SEGMENT.test(s) || s === '..' || s.includes('..'))) {
    throw new Error(`evidence key "${key}" must be /-separated segments of letters, digits, ".", "_" and "-"`);
  }
}

/** Evidence on the local disk, for single-machine use and tests. */
export class FileEvidenceSink implements EvidenceSink {
  constructor(readonly dir: string) {}

  pathOf(key: string): string {
    assertEvidenceKey(key);
    const root = resolve(this.dir);
    const path = resolve(join(root, key));
    if (!path.startsWith(root + sep)) throw new Error(`evidence key "${key}" escapes ${root}`);
    return path;
  }

  async put(key: string, body: Uint8Array | string, _contentType: string): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, body);
  }
}

export function sha256(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export function contentTypeFor(fileName: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  switch (ext) {
    case 'csv':
      return 'text/csv; charset=utf-8';
    case 'json':
      return 'application/json';
    case 'png':
      return 'image/png';
    case 'txt':
      return 'text/plain; charset=utf-8';
    case 'xlsx':
      return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    case 'pdf':
      return 'application/pdf';
    default:
      return 'application/octet-stream';
  }
}
