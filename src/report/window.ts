/**
 * `--since` for the report: an ISO date or date-time, or a duration back from
 * now (`90m`, `24h`, `7d`, `2w`).
 */
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;

export function parseSince(value: string, now: Date = new Date()): Date {
  const trimmed = value.trim();
  const relative = /^(\d{1,6})([mhdw])$/.exec(trimmed);
  if (relative) {
    const amount = Number(relative[1]);
    return new Date(now.getTime() - amount * UNIT_MS[relative[2] as keyof typeof UNIT_MS]);
  }
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(trimmed)) {
    const parsed = new Date(trimmed);
    if (!Number.isNaN(parsed.getTime())) return parsed;
  }
  throw new Error(`"${value}" is neither an ISO date (2026-12-01, 2026-12-01T08:00:00Z) nor a duration back from now (90m, 24h, 7d, 2w)`);
}
