import { after, before, beforeEach } from 'node:test';

/**
 * One fixture for the whole test file: started in `before`, optionally reset
 * before each test, stopped in `after`. The returned object is filled in by
 * `before`, so tests read it as they would the started fixture.
 */
export function useFixture<T extends object>(
  start: () => Promise<T>,
  hooks: { stop(fixture: T): Promise<void>; reset?(fixture: T): Promise<unknown> },
): T {
  const fixture = {} as T;
  let started = false;
  before(async () => {
    Object.assign(fixture, await start());
    started = true;
  });
  if (hooks.reset) {
    const reset = hooks.reset;
    beforeEach(async () => {
      await reset(fixture);
    });
  }
  after(async () => {
    if (started) await hooks.stop(fixture);
  });
  return fixture;
}
