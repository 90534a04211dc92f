import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * Runs a conditional write (a put or update with a ConditionExpression) and
 * returns its output, or undefined when DynamoDB refused it because the
 * condition did not hold: another writer came first. What a refusal means
 * (already claimed, fenced, a version conflict, try again) is the caller's to
 * say; every other error is thrown as it came.
 */
export async function writeIfConditionHolds<Output extends object>(write: () => Promise<Output>): Promise<Output | undefined> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
