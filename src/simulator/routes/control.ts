import { timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { sendJson } from '../http-util.js';
import { describeIssues, FaultListBodySchema, FaultSpecSchema, ResetSpecSchema } from '../schemas.js';
import type { Exchange } from './exchange.js';

/**
 * /__sim/*: test and chaos control. Absent (404) unless the simulator was
 * started with a control token; every call must carry x-sim-token. Bodies are
 * validated whole before anything changes, so a bad request changes nothing.
 */

function tokenMatches(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function parseBody<T extends z.ZodType>(ex: Exchange, schema: T, allowEmpty: boolean): z.infer<T> | undefined {
  const raw = ex.body.trim();
  let json: unknown;
  if (raw === '' && allowEmpty) {
    json = {};
  } else {
    try {
      json = JSON.parse(raw);
    } catch {
      sendJson(ex.res, 400, { error: 'invalid_request', message: 'body: not valid JSON' });
      return undefined;
    }
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    sendJson(ex.res, 400, {
      error: 'invalid_request',
      message: describeIssues(parsed.error, 'body'),
      issues: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
    return undefined;
  }
  return parsed.data;
}

export async function handleControl(ex: Exchange, controlToken: string | undefined): Promise<void> {
  if (controlToken === undefined) {
    sendJson(ex.res, 404, { error: 'not_found', message: 'not found' });
    return;
  }
  if (!tokenMatches(ex.req.headers['x-sim-token'], controlToken)) {
    sendJson(ex.res, 401, { error: 'unauthorized', message: 'x-sim-token header missing or wrong' });
    return;
  }
  const route = `${ex.req.method ?? 'GET'} ${ex.url.pathname}`;
  const { office } = ex;
  switch (route) {
    case 'POST /__sim/reset': {
      const spec = parseBody(ex, ResetSpecSchema, true);
      if (spec) sendJson(ex.res, 200, office.reset(spec));
      return;
    }
    case 'POST /__sim/faults': {
      const body = parseBody(ex, FaultListBodySchema, false);
      if (!body) return;
      office.faults.replace(body.faults);
      sendJson(ex.res, 200, { faults: office.faults.list() });
      return;
    }
    case 'POST /__sim/faults/add': {
      const fault = parseBody(ex, FaultSpecSchema, false);
      if (!fault) return;
      office.faults.add(fault);
      sendJson(ex.res, 200, { faults: office.faults.list() });
      return;
    }
    case 'GET /__sim/journal':
      sendJson(ex.res, 200, { journal: office.ledger.journal() });
      return;
    case 'GET /__sim/state':
      sendJson(ex.res, 200, office.state());
      return;
    case 'GET /__sim/timings':
      sendJson(ex.res, 200, { timings: office.timings() });
      return;
    default:
      sendJson(ex.res, 404, {
        error: 'not_found',
        message: `no control endpoint ${route}; see POST reset|faults|faults/add, GET journal|state|timings under /__sim/`,
      });
  }
}
