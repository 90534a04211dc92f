import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Services } from '../../src/app/services.js';
import { parseSitePack } from '../../src/sitepack/load.js';
import type { SitePack } from '../../src/sitepack/schema.js';

/**
 * A copy of an in-repo pack with one line changed, as a pack author might get it wrong, parsed as the loader
 * parses any pack. The edit must change the text (a replaced line that is not there fails here, not later).
 */
export function packVariant(path: string, from: string, to: string): SitePack {
  const text = readFileSync(path, 'utf8');
  assert.ok(text.includes(from), `${path} has no line ${JSON.stringify(from)}`);
  return parseSitePack(text.replace(from, to), `${path} (edited)`);
}

/**
 * Runs `work` with the embedded stack's steps reading `pack` instead of the config's: one stack per test file
 * serves the good pack and its broken copies. Every handler of the embedded runtime reads these services or a
 * tenant's session of them (forTenant, cached per tenant and identity), so the pack is swapped on each.
 */
export async function withPack<T>(services: Services, pack: SitePack, work: () => Promise<T>): Promise<T> {
  const scoped = [
    services,
    ...services.config.tenants.flatMap((t) => [
      services.forTenant({ tenant: t.id, identity: t.identity }),
      services.forTenant({ tenant: t.id }),
    ]),
  ];
  const originals = scoped.map((s) => s.pack);
  for (const s of scoped) s.pack = pack;
  try {
    return await work();
  } finally {
    for (const [i, s] of scoped.entries()) s.pack = originals[i]!;
  }
}
