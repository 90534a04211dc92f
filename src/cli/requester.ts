import { userInfo } from 'node:os';
import { z } from 'zod';
import type { PaperclipConfig } from '../config/schema.js';
import { UsageError } from './args.js';

/** The --requested-by flag of the commands that start writes; cliRequester decides whether it may be used. */
export const RequestedByFlag = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .optional()
  .meta({ value: 'who', description: 'another requester; only where the config sets requesters.allow_requested_by_flag' });

/**
 * Who the CLI says is asking: the configured operator (requesters.operator),
 * else the OS user as operator:<name>. --requested-by may name someone else
 * only where the config allows it (requesters.allow_requested_by_flag), since
 * whoever is named there is kept from approving the request.
 */
export function cliRequester(config: PaperclipConfig, flag: string | undefined, command: string): string {
  if (flag !== undefined && !config.requesters.allow_requested_by_flag) {
    throw new UsageError(command, [
      {
        path: '--requested-by',
        message:
          'the requester is the configured operator (requesters.operator) or the OS user, not a flag; ' +
          'set requesters.allow_requested_by_flag: true in the config to allow naming another requester',
      },
    ]);
  }
  return flag ?? config.requesters.operator ?? `operator:${osUser()}`;
}

function osUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return process.env['USER'] ?? 'unknown';
  }
}
