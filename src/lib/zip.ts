import { crc32 } from 'node:zlib';
import { strFromU8, unzipSync, zipSync } from 'fflate';

/**
 * Zip archives (Playwright traces) through fflate, which reads zip64, stored and deflated entries. fflate does not
 * check what it extracts against the CRC-32 the archive records, so readZip does: a damaged archive is refused
 * rather than read as if it were whole.
 */

export function readZip(archive: Uint8Array): Map<string, Buffer> {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(archive);
  } catch (error) {
    throw new Error(`not a readable zip archive: ${(error as Error).message}`, { cause: error });
  }
  const recorded = recordedChecksums(archive);
  const entries = new Map<string, Buffer>();
  for (const [name, data] of Object.entries(files)) {
    if (crc32(data) !== recorded.get(name)) throw new Error(`zip entry ${name} does not match its CRC-32: the archive is damaged`);
    entries.set(name, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  return entries;
}

export function writeZip(entries: ReadonlyMap<string, Uint8Array>): Buffer {
  const archive = zipSync(Object.fromEntries(entries), { level: 6 });
  return Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength);
}

/**
 * The CRC-32 of each entry, from the central directory (zip64 or not). Only called once fflate has read the
 * archive, so the records it walks are known to be there.
 */
function recordedChecksums(archive: Uint8Array): Map<string, number> {
  const view = new DataView(archive.buffer, archive.byteOffset, archive.byteLength);
  let end = archive.length - 22;
  while (view.getUint32(end, true) !== 0x06054b50) end--;
  let count = view.getUint16(end + 10, true);
  let offset = view.getUint32(end + 16, true);
  const locator = end - 20;
  if (locator >= 0 && view.getUint32(locator, true) === 0x07064b50) {
    const zip64End = Number(view.getBigUint64(locator + 8, true));
    count = Number(view.getBigUint64(zip64End + 32, true));
    offset = Number(view.getBigUint64(zip64End + 48, true));
  }
  const checksums = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const utf8Name = (view.getUint16(offset + 8, true) & 0x0800) !== 0;
    const nameLength = view.getUint16(offset + 28, true);
    const name = strFromU8(archive.subarray(offset + 46, offset + 46 + nameLength), !utf8Name);
    checksums.set(name, view.getUint32(offset + 16, true));
    offset += 46 + nameLength + view.getUint16(offset + 30, true) + view.getUint16(offset + 32, true);
  }
  return checksums;
}
