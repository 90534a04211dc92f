/** What every fault spec has, whichever back office it is for: a kind and optional scopes. */
export interface ScopedFaultSpec<K extends string = string> {
  kind: K;
  bill?: string;
  tenant?: string;
  identity?: string;
  ms?: number;
  times?: number;
  /** Which requests a request-level fault (rate_limited) hits: every one (the default), reads (GET/HEAD) or writes. */
  requests?: 'all' | 'reads' | 'writes';
}

/** What a request is about, for matching scoped faults. */
export interface FaultContext {
  identity?: string;
  tenant?: string;
  bill?: string;
  /** Whether the request changes something (not GET/HEAD); known before routing. */
  write?: boolean;
}

interface Armed<S extends ScopedFaultSpec> {
  spec: S;
  remaining: number | undefined;
  fired: number;
}

/**
 * The installed faults. A fault matches a request when every scope it names
 * (bill, tenant, identity) equals the request's; a fault naming none is global.
 * The first matching fault of a kind with firings left wins and uses one firing.
 * Exhausted faults stay listed (remaining 0) so tests can see they fired.
 */
export class FaultBook<S extends ScopedFaultSpec> {
  private armed: Armed<S>[] = [];

  replace(specs: readonly S[]): void {
    this.armed = specs.map(arm);
  }

  add(spec: S): void {
    this.armed.push(arm(spec));
  }

  clear(): void {
    this.armed = [];
  }

  /** Returns the fault that fires for this request, consuming one firing, or undefined. */
  fire(kind: S['kind'], context: FaultContext): S | undefined {
    const hit = this.armed.find((a) => a.spec.kind === kind && hasFiringsLeft(a) && matches(a.spec, context));
    if (!hit) return undefined;
    hit.fired += 1;
    if (hit.remaining !== undefined) hit.remaining -= 1;
    return hit.spec;
  }

  list(): Array<S & { remaining?: number; fired: number }> {
    return this.armed.map((a) => ({
      ...a.spec,
      ...(a.remaining === undefined ? {} : { remaining: a.remaining }),
      fired: a.fired,
    }));
  }
}

function arm<S extends ScopedFaultSpec>(spec: S): Armed<S> {
  return { spec: { ...spec }, remaining: spec.times, fired: 0 };
}

function hasFiringsLeft(a: Armed<ScopedFaultSpec>): boolean {
  return a.remaining === undefined || a.remaining > 0;
}

function matches(spec: ScopedFaultSpec, context: FaultContext): boolean {
  if (spec.bill !== undefined && spec.bill !== context.bill) return false;
  if (spec.tenant !== undefined && spec.tenant !== context.tenant) return false;
  if (spec.identity !== undefined && spec.identity !== context.identity) return false;
  if (spec.requests === 'reads' && context.write !== false) return false;
  if (spec.requests === 'writes' && context.write !== true) return false;
  return true;
}
