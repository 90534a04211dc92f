import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { writeIfConditionHolds } from '../../src/adapters/dynamodb/conditional-write.js';

test('a conditional write returns its output, undefined when the condition failed, and throws anything else', async () => {
  assert.deepEqual(await writeIfConditionHolds(async () => ({ Attributes: { key: 'k' } })), { Attributes: { key: 'k' } });
  const refused = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
  assert.equal(
    await writeIfConditionHolds(async () => {
      throw refused;
    }),
    undefined,
  );
  await assert.rejects(
    writeIfConditionHolds(async () => {
      throw new Error('ProvisionedThroughputExceededException');
    }),
    /ProvisionedThroughputExceededException/,
  );
});
