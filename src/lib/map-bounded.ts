/**
 * Maps `items` through `fn` with at most `limit` calls in flight, keeping the
 * results in input order. For fan-outs over a batch (hundreds of S3 or
 * DynamoDB round trips) where one at a time is too slow and all at once would
 * exhaust sockets or throttle.
 *
 * After a call fails no new call starts; the calls already in flight are
 * awaited, then the map rejects with the first failure, so nothing it began
 * is still running when the caller hears of it.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failure) throw failure.error;
  return results;
}
