import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DescribeExecutionCommand, type DescribeExecutionCommandOutput, type SFNClient } from '@aws-sdk/client-sfn';
import { lambdaFunctionArn, stateMachineArn } from '../../../twin/aws/stepfunctions/index.js';
import { loadStateMachineDefinition } from '../../../src/contracts/asl.js';
import { setTimeout as sleep } from 'node:timers/promises';

export const REGION = 'us-east-1';
export const ACCOUNT = '000000000000';
export const ROLE = `arn:aws:iam::${ACCOUNT}:role/test`;
const scope = { region: REGION, accountId: ACCOUNT };

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export function fnArn(name: string): string {
  return lambdaFunctionArn(scope, name);
}

export function smArn(name: string): string {
  return stateMachineArn(scope, name);
}

export function fixture(file: string, substitutions: Record<string, string>): string {
  return loadStateMachineDefinition(join(FIXTURES, file), substitutions);
}

export function fixturePath(file: string): string {
  return join(FIXTURES, file);
}

/** Polls DescribeExecution until the execution has closed. */
export async function closedExecution(sfn: SFNClient, executionArn: string, limitMs = 20_000): Promise<DescribeExecutionCommandOutput> {
  const until = Date.now() + limitMs;
  for (;;) {
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (described.status !== 'RUNNING') return described;
    if (Date.now() > until) throw new Error(`${executionArn} still RUNNING after ${limitMs} ms`);
    await sleep(20);
  }
}

export function temporaryFolder(label: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `paperclip-${label}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Expects `promise` to reject with an AWS error of this name; returns it. */
export async function awsError(promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { $metadata?: { httpStatusCode?: number } };
  }
  throw new Error('expected the call to fail');
}

export class NamedError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}
