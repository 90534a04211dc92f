import type { Services } from './services.js';
import { InputRejectedError } from '../domain/errors.js';
import { idempotencyKey, type BatchRequest, type WriteTask } from '../domain/task.js';
import {
  compensationStartAttestation,
  compensationStartAttested,
  derivedAttestationKey,
  requesterAttestation,
  requesterAttested,
  type CompensationStartClaim,
  type RequesterClaim,
} from '../domain/requester-attestation.js';

/**
 * The requester of a write, as its entry point authenticated it (see
 * src/domain/requester-attestation.ts and docs/approvals.md, "Who asked").
 */

type KeyHolder = Pick<Services, 'config' | 'secretStrings'>;

/** The attestation key: requesters.attestation_secret, or locally one derived from the inline approval signing secret. */
export async function requesterAttestationKey(s: KeyHolder): Promise<string> {
  const source = s.config.requesters.attestation_secret;
  if (source?.source === 'inline') return source.value;
  if (source?.source === 'secrets_manager') {
    const secret = await s.secretStrings.get(source.secret_id);
    if (!secret) throw new Error(`requester attestation secret ${source.secret_id} is empty`);
    return secret;
  }
  const signing = s.config.approvals.signing_secret;
  if (signing.source !== 'inline') {
    throw new Error('requesters.attestation_secret: set it (a Secrets Manager secret) when approvals.signing_secret is not inline');
  }
  return derivedAttestationKey(signing.value);
}

export function executionNameOf(executionArn: string): string {
  return executionArn.split(':').at(-1) ?? executionArn;
}

/** The task as its entry point hands it to the workflow: with the attestation of its requester for this execution name. */
export async function attestedTask(s: KeyHolder, task: WriteTask, executionName: string): Promise<WriteTask> {
  const claim = { requestedBy: task.requestedBy, subject: idempotencyKey(task), executionName };
  return { ...task, attestation: requesterAttestation(await requesterAttestationKey(s), claim) };
}

/** A batch request as its entry point starts it. */
export async function attestedBatch<B extends { taskId: string; tenant: string; requestedBy: string }>(
  s: KeyHolder,
  batch: B,
  executionName: string,
): Promise<B & { attestation: string }> {
  const claim = { requestedBy: batch.requestedBy, subject: batchSubject(batch), executionName };
  return { ...batch, attestation: requesterAttestation(await requesterAttestationKey(s), claim) };
}

// The task id as ReadList normalises it (a scheduled id's colons dropped), so an entry point may attest either spelling.
const batchSubject = (batch: { tenant: string; taskId: string }) => `batch:${batch.tenant}:${batch.taskId.replace(/:/g, '')}`;

/**
 * ValidateRoute's check: the task's requestedBy is attested for this key and
 * this execution. Otherwise the item is rejected, nothing claimed or written.
 */
export async function assertRequesterAttested(
  s: KeyHolder,
  task: Pick<WriteTask, 'requestedBy' | 'attestation'>,
  key: string,
  executionArn: string,
): Promise<void> {
  await assertAttested(
    s,
    'task',
    { requestedBy: task.requestedBy, subject: key, executionName: executionNameOf(executionArn) },
    task.attestation,
  );
}

/**
 * ReadList's check of a batch: attested like a task. A schedule's batch too:
 * its entry point is the start-scheduled-batch function, which attests the
 * schedule's name (src/app/scheduled-batch.ts); no requester, the schedule's
 * included, is taken on the word of whoever started the execution.
 */
export async function assertBatchRequesterAttested(s: KeyHolder, batch: BatchRequest, executionArn: string): Promise<void> {
  const claim = { requestedBy: batch.requestedBy, subject: batchSubject(batch), executionName: executionNameOf(executionArn) };
  await assertAttested(s, 'batch', claim, batch.attestation);
}

async function assertAttested(s: KeyHolder, what: 'task' | 'batch', claim: RequesterClaim, attestation: string | undefined): Promise<void> {
  if (requesterAttested(await requesterAttestationKey(s), claim, attestation)) return;
  const why = attestation ? 'its attestation does not match this requester, write and execution' : 'it carries no attestation';
  throw new InputRejectedError(
    `${what}.requestedBy: the requester is not attested by an entry point (${why}); ` +
      'start writes through the batch, the CLI or the compensation path, which name the requester from who they are',
    'requestedBy',
  );
}

/** The compensation path's signature for the `compensation_started` event it appends (see compensation-path.ts). */
export async function attestCompensationStart(s: KeyHolder, claim: CompensationStartClaim): Promise<string> {
  return compensationStartAttestation(await requesterAttestationKey(s), claim);
}

/** Whether a `compensation_started` event was signed by the compensation path for exactly this claim. */
export async function compensationStartIsAttested(s: KeyHolder, claim: CompensationStartClaim, attestation: unknown): Promise<boolean> {
  return compensationStartAttested(await requesterAttestationKey(s), claim, attestation);
}
