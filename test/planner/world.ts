import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeSharedBrowser, sharedBrowser } from '../../src/browser/chromium.js';
import { IdentitySessions } from '../../src/browser/identity-sessions.js';
import { loadSitePack } from '../../src/sitepack/load.js';
import { startSimulator, type RunningSimulator } from '../../backoffices/simulator/server.js';
import { SimulatorControl } from '../../backoffices/simulator/control-client.js';
import { parsePlannerConfig, type PlannerConfig, type PlannerConfigInput } from '../../planner/config.js';
import { memoryLogger } from '../../planner/log.js';
import { createPlannerModel } from '../../planner/providers/index.js';
import { startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { useFixture } from '../support/fixture.js';

/**
 * What a planner end-to-end test needs: the vendor simulator, the fake model
 * server speaking real wire formats, the site pack, a temp folder, and
 * logged-in pages of the tenant's own identity on the shared browser.
 */
export interface World {
  sim: RunningSimulator;
  control: SimulatorControl;
  fake: FakeModelServer;
  pack: ReturnType<typeof loadSitePack>;
  dir: string;
  openPage(): Promise<{ page: import('playwright-core').Page; close(): Promise<void> }>;
  plannerConfig(wire: 'bedrock' | 'openai', overrides?: Partial<PlannerConfigInput>): PlannerConfig;
  model(config: PlannerConfig, logger?: ReturnType<typeof memoryLogger>): ReturnType<typeof createPlannerModel>;
  close(): Promise<void>;
}

export const CONTROL_TOKEN = 'planner-test-token';

export async function startWorld(): Promise<World> {
  const sim = await startSimulator({ controlToken: CONTROL_TOKEN, asyncDelayMs: 0 });
  const fake = await startFakeModelServer();
  const pack = loadSitePack('sitepacks/vendor-sim.yaml');
  const sessions = new IdentitySessions(sharedBrowser, pack, sim.url);
  const dir = await mkdtemp(join(tmpdir(), 'planner-test-'));
  return {
    sim,
    control: new SimulatorControl(sim.url, CONTROL_TOKEN),
    fake,
    pack,
    dir,
    async openPage() {
      const session = await sessions.open('svc-recon-acme', { username: 'svc-recon-acme', password: 'pw-acme-2026' }, 'read', {
        trace: false,
      });
      return { page: session.page, close: async () => void (await session.close()) };
    },
    plannerConfig(wire, overrides = {}) {
      return parsePlannerConfig({
        provider: wire,
        model: wire === 'bedrock' ? 'anthropic.claude-3-5-sonnet-20240620-v1:0' : 'qwen2.5-14b-instruct',
        endpoint: wire === 'bedrock' ? fake.bedrockEndpoint : fake.url,
        step_timeout_ms: 1500,
        ...overrides,
      });
    },
    model(config, logger = memoryLogger()) {
      return createPlannerModel(config, { logger, credentials: { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local' } });
    },
    async close() {
      await fake.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One world for the whole test file, closed (with the shared browser) after its last test. */
export function useWorld(): World {
  return useFixture(startWorld, {
    stop: async (world) => {
      await world.close();
      await closeSharedBrowser();
    },
  });
}
