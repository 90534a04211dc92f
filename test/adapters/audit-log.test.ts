import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AuditLog } from '../../src/adapters/dynamodb/audit-log.js';
import { verifyChain } from '../../src/domain/audit-chain.js';
import { withInvocationMemo } from '../../src/lib/invocation-memo.js';
import { tableName } from '../../src/contracts/table-definitions.js';
import { awsClientConfig, startLocalStack, type LocalStack } from '../../twin/aws/stack.js';
import { sampleEvent } from '../support/audit-events.js';

/**
 * The audit chain's appends on the emulated table (dynalite). Within one step invocation an append starts from the
 * head that invocation last read or wrote instead of reading it again; these tests count the head reads (Query) and
 * show the chain stays whole and linear when another writer appended in between, and that nothing is remembered
 * from one invocation to the next.
 */

let stack: LocalStack;
let db: DynamoDBDocumentClient;
let queries = 0;
let audit: AuditLog;

before(async () => {
  stack = await startLocalStack({ handlers: {}, prefix: 'paperclip-local', bucket: 'paperclip-evidence' });
  db = DynamoDBDocumentClient.from(new DynamoDBClient(awsClientConfig(stack.endpoints.dynamodb, stack.region)));
  db.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') queries += 1;
      return next(args);
    },
    { step: 'initialize', name: 'countQueries' },
  );
  audit = new AuditLog(db, tableName('paperclip-local', 'audit'));
});

after(async () => {
  db.destroy();
  await stack.stop();
});

const event = (n: number) => sampleEvent('write_step', { tier: 'browser', stage: 'mark', step: n });

describe('audit log appends', () => {
  it('reads the head once per invocation, then appends after what it wrote', async () => {
    const chain = 'k-memo-once';
    queries = 0;
    await withInvocationMemo(async () => {
      for (let n = 0; n < 4; n++) await audit.append(chain, event(n));
    });
    assert.equal(queries, 1, 'one head read for four appends');
    const events = await audit.events(chain);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4],
    );
    assert.equal(verifyChain(events), undefined);
  });

  it('a head another writer moved on is refused by the write, read again, and the chain stays linear', async () => {
    const chain = 'k-memo-raced';
    await withInvocationMemo(async () => {
      await audit.append(chain, event(1));
      // Another invocation (another process on AWS) appends two events meanwhile.
      await withInvocationMemo(async () => {
        await audit.append(chain, event(2));
        await audit.append(chain, event(3));
      });
      queries = 0;
      await audit.append(chain, event(4));
    });
    // This invocation still believed seq 1 was the head.
    assert.equal(queries, 1, 'the refused write sent the append back to reading the head');
    const events = await audit.events(chain);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4],
    );
    assert.equal(verifyChain(events), undefined, 'every event links to the one before it');
  });

  it('remembers nothing across invocations, nor outside one', async () => {
    const chain = 'k-memo-fresh';
    await withInvocationMemo(() => audit.append(chain, event(1)));
    queries = 0;
    await withInvocationMemo(() => audit.append(chain, event(2)));
    await audit.append(chain, event(3));
    await audit.append(chain, event(4));
    assert.equal(queries, 3, 'each append outside, and the first of each invocation, reads the head');
    assert.equal(verifyChain(await audit.events(chain)), undefined);
  });
});
