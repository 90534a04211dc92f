import type { ActiveFault, FaultKind, FaultSpec } from './schemas.js';

/** What a request is about, for matching scoped faults. */
export interface FaultContext {
  identity?: string;
  tenant?: string;
  bill?: string;
}

interface Armed {
  spec: FaultSpec;
  remaining: number | undefined;
  fired: number;
}

/**
 * The installed faults. A fault matches a request when every scope it names
 * (bill, tenant, identity) equals the request's; a fault naming none is global.
 * The first matching fault of a kind with firings left wins and uses one firing.
 * Exhausted faults stay listed (remaining 0) so tests can see they fired.
 */
export class FaultBook {
  private armed: Armed[] = [];

  replace(specs: readonly FaultSpec[]): void {
    this.armed = specs.map(arm);
  }

  add(spec: FaultSpec): void {
    this.armed.push(arm(spec));
  }

  clear(): void {
    this.armed = [];
  }

  /** Returns the fault that fires for this request, consuming one firing, or undefined. */
  fire(kind: FaultKind, context: FaultContext): FaultSpec | undefined {
    const hit = this.armed.find((a) => a.spec.kind === kind && hasFiringsLeft(a) && matches(a.spec, context));
    if (!hit) return undefined;
    hit.fired += 1;
    if (hit.remaining !== undefined) hit.remaining -= 1;
    return hit.spec;
  }

  list(): ActiveFault[] {
    return this.armed.map((a) => ({
      ...a.spec,
      ...(a.remaining === undefined ? {} : { remaining: a.remaining }),
      fired: a.fired,
    }));
  }
}

function arm(spec: FaultSpec): Armed {
  return { spec: { ...spec }, remaining: spec.times, fired: 0 };
}

function hasFiringsLeft(a: Armed): boolean {
  return a.remaining === undefined || a.remaining > 0;
}

function matches(spec: FaultSpec, context: FaultContext): boolean {
  if (spec.bill !== undefined && spec.bill !== context.bill) return false;
  if (spec.tenant !== undefined && spec.tenant !== context.tenant) return false;
  if (spec.identity !== undefined && spec.identity !== context.identity) return false;
  return true;
}
