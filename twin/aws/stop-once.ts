/**
 * An emulator's stop(): the first call stops it, a later one (a stack stopping a service a test already stopped)
 * does nothing.
 */
export function stopOnce(stop: () => Promise<void>): () => Promise<void> {
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    await stop();
  };
}
