import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { FaultBook, ScopedFaultSpec } from './faults.js';
import { sendJson } from './http-util.js';
import { parseJsonText } from './schemas.js';

/**
 * /__sim/*: test and chaos control. Absent (404) unless the back office was
 * started with a control token; every call must carry x-sim-token. Bodies are
 * validated whole before anything changes, so a bad request changes nothing.
 */

function tokenMatches(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The part of a request the control API needs; every back office's exchange has it. */
export interface ControlExchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: string;
}

/** What a back office exposes to its control API. */
export interface ControlSurface<Reset, Fault extends ScopedFaultSpec> {
  resetSchema: z.ZodType<Reset>;
  faultSchema: z.ZodType<Fault>;
  reset(spec: Reset): unknown;
  faults: FaultBook<Fault>;
  journal(): unknown[];
  state(): unknown;
  timings(): unknown[];
}

function parseBody<T extends z.ZodType>(ex: ControlExchange, schema: T, allowEmpty: boolean): z.infer<T> | undefined {
  const raw = ex.body.trim();
  const parsed = parseJsonText(raw === '' && allowEmpty ? '{}' : raw, schema);
  if (parsed.ok) return parsed.data;
  const issues = parsed.error?.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  sendJson(ex.res, 400, { error: 'invalid_request', message: parsed.message, ...(issues ? { issues } : {}) });
  return undefined;
}

/** The control API of any in-repo back office: the same paths, header and answers for all. */
export function handleControlRequest<Reset, Fault extends ScopedFaultSpec>(
  ex: ControlExchange,
  controlToken: string | undefined,
  surface: ControlSurface<Reset, Fault>,
): void {
  if (controlToken === undefined) {
    sendJson(ex.res, 404, { error: 'not_found', message: 'not found' });
    return;
  }
  if (!tokenMatches(ex.req.headers['x-sim-token'], controlToken)) {
    sendJson(ex.res, 401, { error: 'unauthorized', message: 'x-sim-token header missing or wrong' });
    return;
  }
  const route = `${ex.req.method ?? 'GET'} ${ex.url.pathname}`;
  switch (route) {
    case 'POST /__sim/reset': {
      const spec = parseBody(ex, surface.resetSchema, true);
      if (spec) sendJson(ex.res, 200, surface.reset(spec));
      return;
    }
    case 'POST /__sim/faults': {
      const body = parseBody(ex, z.strictObject({ faults: z.array(surface.faultSchema).max(100) }), false);
      if (!body) return;
      surface.faults.replace(body.faults);
      sendJson(ex.res, 200, { faults: surface.faults.list() });
      return;
    }
    case 'POST /__sim/faults/add': {
      const fault = parseBody(ex, surface.faultSchema, false);
      if (!fault) return;
      surface.faults.add(fault);
      sendJson(ex.res, 200, { faults: surface.faults.list() });
      return;
    }
    case 'GET /__sim/journal':
      sendJson(ex.res, 200, { journal: surface.journal() });
      return;
    case 'GET /__sim/state':
      sendJson(ex.res, 200, surface.state());
      return;
    case 'GET /__sim/timings':
      sendJson(ex.res, 200, { timings: surface.timings() });
      return;
    default:
      sendJson(ex.res, 404, {
        error: 'not_found',
        message: `no control endpoint ${route}; see POST reset|faults|faults/add, GET journal|state|timings under /__sim/`,
      });
  }
}
