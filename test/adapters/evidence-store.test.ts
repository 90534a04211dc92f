import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { EvidenceStore } from '../../src/adapters/s3/evidence-store.js';

// s3rver has no IAM: it cannot answer a GET of a missing key with 403 the way S3 does for a
// principal whose s3:ListBucket grant is limited to a prefix. This stand-in client answers
// exactly that (and a prefix listing), which is all the case needs.
function deniedS3(listed: string[]): S3Client {
  return {
    send: async (command: unknown) => {
      if (command instanceof GetObjectCommand) throw Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
      if (command instanceof ListObjectsV2Command) {
        const prefix = command.input.Prefix ?? '';
        return { Contents: listed.filter((k) => k.startsWith(prefix)).map((Key) => ({ Key })) };
      }
      throw new Error('unexpected command');
    },
  } as unknown as S3Client;
}

test('a missing object answered with 403 (prefix-limited ListBucket) reads as missing; a denied existing object still fails', async () => {
  const missing = new EvidenceStore(deniedS3([]), 'bucket');
  assert.equal(await missing.get('evidence/acme/T-1/seal.json'), undefined);
  const present = new EvidenceStore(deniedS3(['evidence/acme/T-1/k-1/trace.zip']), 'bucket');
  await assert.rejects(present.get('evidence/acme/T-1/k-1/trace.zip'), { name: 'AccessDenied' });
});
