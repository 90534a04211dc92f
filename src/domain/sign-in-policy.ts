import type { ApproverSignIn } from '../config/schema.js';
import { parseAmount } from './amount.js';

/**
 * Which approval requests policy says only a signed-in approver may decide:
 * the approval pages ask for the sign-in, and the write, before it commits,
 * asks the decision to prove it (prove-approval.ts).
 */
export function signInRequired(signIn: ApproverSignIn | undefined, request: { action: string; amount?: string | undefined }): boolean {
  if (!signIn) return false;
  if (signIn.required_for.actions.includes(request.action)) return true;
  const threshold = signIn.required_for.amount_above;
  if (threshold === undefined) return false;
  if (request.amount === undefined) return false;
  const amount = parseAmount(request.amount);
  const limit = parseAmount(threshold);
  // An amount that cannot be read (or has more than two decimals) cannot be compared: ask for sign-in rather than skip it.
  if (!amount || !limit) return true;
  return amount.cents > limit.cents;
}

/**
 * The sign-in a decision was made under, kept on the approval record and in its
 * audit event: the issuer, the subject and the provider's signed ID token itself,
 * so that the write can check the provider's signature instead of trusting the record.
 */
export interface DecisionSignIn {
  issuer: string;
  subject: string;
  /** The ID token (compact JWS) the provider issued for this sign-in. */
  idToken: string;
}
