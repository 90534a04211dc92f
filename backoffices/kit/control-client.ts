import { z } from 'zod';
import { NamedError } from '../../src/domain/errors.js';
import {
  ActiveFaultSchema,
  describeIssues,
  RequestTimingSchema,
  ResetResultSchema,
  type ActiveFault,
  type RequestTiming,
  type ResetResult,
} from './schemas.js';

export class SimulatorControlError extends NamedError {
  override readonly name = 'SimulatorControlError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const FaultListSchema = z.object({ faults: z.array(ActiveFaultSchema) });
const TimingListSchema = z.object({ timings: z.array(RequestTimingSchema) });

/** The schemas one back office's control API speaks; the calls and the transport are the same for all. */
export interface ControlSchemas<Reset extends z.ZodType, Fault extends z.ZodType, Journal extends z.ZodType, State extends z.ZodType> {
  reset: Reset;
  fault: Fault;
  journalEntry: Journal;
  state: State;
}

/**
 * Typed client for a simulated back office's /__sim control API. For tests,
 * benchmarks and chaos runs only: the product never talks to it. Inputs are
 * validated before sending and answers are parsed, so drift shows up as a
 * clear error. Every in-repo back office has the same calls, so a harness can
 * take either.
 */
export class BackOfficeControl<Reset extends z.ZodType, Fault extends z.ZodType, Journal extends z.ZodType, State extends z.ZodType> {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly schemas: ControlSchemas<Reset, Fault, Journal, State>,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** Fresh data from the seed; clears journal, faults, sessions and timings. */
  async reset(spec?: z.input<Reset>): Promise<ResetResult> {
    return this.call('POST', '/__sim/reset', ResetResultSchema, validate(this.schemas.reset, spec ?? {}, 'reset spec'));
  }

  /** Replaces every installed fault. */
  async setFaults(faults: z.input<Fault>[]): Promise<ActiveFault[]> {
    const body = { faults: faults.map((f, i) => validate(this.schemas.fault, f, `faults[${i}]`)) };
    return (await this.call('POST', '/__sim/faults', FaultListSchema, body)).faults;
  }

  async addFault(fault: z.input<Fault>): Promise<ActiveFault[]> {
    return (await this.call('POST', '/__sim/faults/add', FaultListSchema, validate(this.schemas.fault, fault, 'fault'))).faults;
  }

  async journal(): Promise<z.infer<Journal>[]> {
    return (await this.call('GET', '/__sim/journal', z.object({ journal: z.array(this.schemas.journalEntry) }))).journal;
  }

  async state(): Promise<z.infer<State>> {
    return this.call('GET', '/__sim/state', this.schemas.state);
  }

  async timings(): Promise<RequestTiming[]> {
    return (await this.call('GET', '/__sim/timings', TimingListSchema)).timings;
  }

  private async call<T extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: T, body?: unknown): Promise<z.infer<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { 'x-sim-token': this.token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new SimulatorControlError(`${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`, response.status);
    }
    if (!response.ok) {
      const message = (json as { message?: unknown }).message;
      throw new SimulatorControlError(`${method} ${path}: HTTP ${response.status}: ${String(message ?? text)}`, response.status);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new SimulatorControlError(`${method} ${path}: unexpected answer: ${describeIssues(parsed.error)}`, response.status);
    }
    return parsed.data;
  }
}

function validate<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new SimulatorControlError(`invalid ${what}: ${describeIssues(parsed.error)}`, 0);
  return parsed.data;
}
