import { z } from 'zod';
import {
  ActiveFaultSchema,
  describeIssues,
  FaultSpecSchema,
  JournalEntrySchema,
  RequestTimingSchema,
  ResetResultSchema,
  ResetSpecSchema,
  SimStateSchema,
  type ActiveFault,
  type FaultSpec,
  type JournalEntry,
  type RequestTiming,
  type ResetResult,
  type ResetSpec,
  type SimState,
} from './schemas.js';

export class SimulatorControlError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SimulatorControlError';
  }
}

const FaultListSchema = z.object({ faults: z.array(ActiveFaultSchema) });

/**
 * Typed client for the simulator's /__sim control API. For tests, benchmarks
 * and chaos runs only: the product never talks to it. Inputs are validated
 * before sending and answers are parsed, so drift shows up as a clear error.
 */
export class SimulatorControl {
  private readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** Fresh bills from the seed; clears journal, faults, sessions, notes and timings. */
  async reset(spec: ResetSpec = {}): Promise<ResetResult> {
    return this.call('POST', '/__sim/reset', ResetResultSchema, validate(ResetSpecSchema, spec, 'reset spec'));
  }

  /** Replaces every installed fault. */
  async setFaults(faults: FaultSpec[]): Promise<ActiveFault[]> {
    const body = { faults: faults.map((f, i) => validate(FaultSpecSchema, f, `faults[${i}]`)) };
    return (await this.call('POST', '/__sim/faults', FaultListSchema, body)).faults;
  }

  async addFault(fault: FaultSpec): Promise<ActiveFault[]> {
    return (await this.call('POST', '/__sim/faults/add', FaultListSchema, validate(FaultSpecSchema, fault, 'fault'))).faults;
  }

  async journal(): Promise<JournalEntry[]> {
    return (await this.call('GET', '/__sim/journal', z.object({ journal: z.array(JournalEntrySchema) }))).journal;
  }

  async state(): Promise<SimState> {
    return this.call('GET', '/__sim/state', SimStateSchema);
  }

  async timings(): Promise<RequestTiming[]> {
    return (await this.call('GET', '/__sim/timings', z.object({ timings: z.array(RequestTimingSchema) }))).timings;
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
