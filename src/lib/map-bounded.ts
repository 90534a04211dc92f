/**
 * Maps `items` through `fn` with at most `limit` calls in flight, keeping the
 * results in input order. For fan-outs over a batch (hundreds of S3 or
 * DynamoDB round trips) where one at a time is too slow and all at once would
 * exhaust sockets or throttle.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
