import type { PaperclipConfig } from '../config/schema.js';

/**
 * Values from policy that the ASL needs as numbers. Definition substitutions
 * are text inside JSON strings, so numbers are set on the parsed definition
 * instead — by the CDK app and the local stack alike, from the same config.
 */
export function applyPolicy(definitionJson: string, policy: Pick<PaperclipConfig['write_policy'], 'approval_timeout_seconds'>): string {
  const definition = JSON.parse(definitionJson) as { States: Record<string, Record<string, unknown>> };
  const approval = definition.States['RequestApproval'];
  if (approval) {
    approval['TimeoutSeconds'] = policy.approval_timeout_seconds;
    delete approval['TimeoutSecondsPath'];
  }
  return JSON.stringify(definition, null, 2);
}
