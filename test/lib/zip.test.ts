import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { readZip, writeZip } from '../../src/lib/zip.js';

// zip64.zip was written by Info-ZIP with `zip -fz` (forced zip64: zip64 end-of-central-directory record, zip64
// extra fields); trace.trace inside is deflated, test.trace stored.
const zip64 = readFileSync(new URL('./fixtures/zip64.zip', import.meta.url));

test('a zip64 archive from another writer reads whole', () => {
  const entries = readZip(zip64);
  assert.deepEqual([...entries.keys()], ['trace.trace', 'test.trace']);
  assert.equal(entries.get('test.trace')!.toString('utf8'), '{"type":"context-options","version":8}\n');
  const lines = entries.get('trace.trace')!.toString('utf8').trimEnd().split('\n');
  assert.equal(lines.length, 60);
  assert.deepEqual(JSON.parse(lines[59]!), { type: 'action', callId: 'call@60', method: 'click', params: { selector: '#bill-60' } });
});

test('what writeZip writes reads back the same', () => {
  const original = new Map([
    ['trace.network', Buffer.from('{"type":"resource-snapshot"}\n'.repeat(50))],
    ['resources/页面.html', Buffer.from('<p>差异单</p>')],
  ]);
  assert.deepEqual(readZip(writeZip(original)), original);
});

test('an entry whose CRC-32 does not match is refused', () => {
  const archive = writeZip(new Map([['trace.network', Buffer.from('{"type":"resource-snapshot"}\n')]]));
  const central = archive.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  const corrupted = Buffer.from(archive);
  corrupted.writeUInt32LE(corrupted.readUInt32LE(central + 16) ^ 1, central + 16);
  corrupted.writeUInt32LE(corrupted.readUInt32LE(14) ^ 1, 14); // the local header's copy too
  assert.throws(() => readZip(corrupted), /zip entry trace\.network does not match its CRC-32: the archive is damaged/);
});

test('a damaged zip64 archive is refused', () => {
  const corrupted = Buffer.from(zip64);
  const at = corrupted.indexOf('{"type":"context-options"'); // test.trace is stored: its bytes are in the clear
  corrupted[at + 2] = 'T'.charCodeAt(0);
  assert.throws(() => readZip(corrupted), /zip entry test\.trace does not match its CRC-32/);
});

test('something that is not a zip archive gets a clear error', () => {
  assert.throws(() => readZip(Buffer.from('not a zip')), /not a readable zip archive/);
});
