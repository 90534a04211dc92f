import { z } from 'zod';
import { parseCommand, type CommandSpec } from '../src/cli/args.js';

/** `npm run bench -- [--items N] [--concurrency 1,2,4] [--repeat R] [--tracing on|off|both] [--summarize-items N] [--out BENCHMARKS.md]` */

const concurrencyList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'give a comma-separated list of integers, e.g. 1,2,4')
  .transform((text) => [...new Set(text.split(',').map(Number))].sort((a, b) => a - b))
  .refine((levels) => levels.every((c) => c >= 1 && c <= 8), 'each level must be 1 to 8 (the machine has few cores)')
  .refine((levels) => levels.includes(1), 'include 1: per-item latency and the guarded/raw ratio are measured at concurrency 1');

const positiveInt = (name: string, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `${name} must be 1 to ${max}`);

export const BenchFlags = z
  .object({
    items: positiveInt('--items', 200).default(12),
    concurrency: concurrencyList.default([1, 2, 4]),
    repeat: positiveInt('--repeat', 10).default(1),
    tracing: z.enum(['on', 'off', 'both'], { error: '--tracing must be on, off or both' }).default('both'),
    out: z.string().min(1, '--out needs a file name').default('BENCHMARKS.md'),
    'settle-ms': z
      .string()
      .regex(/^\d+$/, '--settle-ms must be a whole number of milliseconds')
      .transform(Number)
      .refine((n) => n <= 5000, '--settle-ms must be at most 5000')
      .default(0),
    json: z.string().min(1).optional(),
    'summarize-items': positiveInt('--summarize-items', 10_000).default(2000),
  })
  .strict();
export type BenchFlags = z.output<typeof BenchFlags>;

const BENCH_SPEC: CommandSpec<typeof BenchFlags> = {
  name: 'bench',
  invocation: 'npm run bench --',
  summary: 'measures the guarded path against raw clicks and writes BENCHMARKS.md',
  description: 'See BENCHMARKS.md for what is measured and how.',
  flags: BenchFlags,
};

export function parseBenchArgs(argv: string[]): BenchFlags {
  return parseCommand(BENCH_SPEC, argv).flags;
}
