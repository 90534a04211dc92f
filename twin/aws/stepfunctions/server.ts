import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { closeServer, listen, LOCAL_HOST } from '../../../src/http/listen.js';
import { SfnServiceError } from './errors.js';
import { BodyTooLargeError, readBody } from '../../../src/http/read-body.js';
import type { LocalHandlers } from './handlers.js';
import { EXECUTION_STATUSES } from './records.js';
import { LocalStepFunctions, type StepFunctionsRunOptions } from './service.js';
import { stopOnce } from '../stop-once.js';

const MAX_BODY_BYTES = 4 * 1024 * 1024;

const arn = z.string().min(1).max(2048);
const maxResults = z.number().int().min(0).max(1000).optional();
const nextToken = z.string().min(1).max(1024).optional();
const taskToken = z.string().min(1).max(2048);

/** Request shapes (the API's camelCase JSON), validated before they reach the service. */
const operations = {
  CreateStateMachine: z.object({
    name: z.string(),
    definition: z.string().min(1).max(1_048_576),
    roleArn: arn,
    type: z.string().optional(),
  }),
  ListStateMachines: z.object({ maxResults, nextToken }),
  DescribeStateMachine: z.object({ stateMachineArn: arn }),
  StartExecution: z.object({ stateMachineArn: arn, name: z.string().optional(), input: z.string().optional() }),
  DescribeExecution: z.object({ executionArn: arn }),
  ListExecutions: z.object({
    stateMachineArn: arn,
    statusFilter: z.enum(EXECUTION_STATUSES).optional(),
    maxResults,
    nextToken,
  }),
  GetExecutionHistory: z.object({
    executionArn: arn,
    maxResults,
    reverseOrder: z.boolean().optional(),
    includeExecutionData: z.boolean().optional(),
    nextToken,
  }),
  StopExecution: z.object({ executionArn: arn, error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
  SendTaskSuccess: z.object({ taskToken, output: z.string() }),
  SendTaskFailure: z.object({ taskToken, error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
} as const;

type OperationName = keyof typeof operations;

function dispatch(service: LocalStepFunctions, operation: OperationName, body: unknown): unknown {
  const parsed = operations[operation].safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || '(body)';
    throw new SfnServiceError(
      'ValidationException',
      `1 validation error detected: Value at '${field}' failed to satisfy constraint: ${issue.message}`,
    );
  }
  const input = parsed.data as never;
  switch (operation) {
    case 'CreateStateMachine':
      return service.createStateMachine(input);
    case 'ListStateMachines':
      return service.listStateMachines(input);
    case 'DescribeStateMachine':
      return service.describeStateMachine(input);
    case 'StartExecution':
      return service.startExecution(input);
    case 'DescribeExecution':
      return service.describeExecution(input);
    case 'ListExecutions':
      return service.listExecutions(input);
    case 'GetExecutionHistory':
      return service.getExecutionHistory(input);
    case 'StopExecution':
      return service.stopExecution(input);
    case 'SendTaskSuccess':
      return service.sendTaskSuccess(input);
    case 'SendTaskFailure':
      return service.sendTaskFailure(input);
  }
}

/** AWS JSON 1.0 carries timestamps as epoch seconds. */
function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    return raw instanceof Date ? raw.getTime() / 1000 : v;
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = encode(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(text);
}

function sendError(res: ServerResponse, err: SfnServiceError): void {
  send(res, err.httpStatus, { __type: err.type, message: err.message });
}

/**
 * The Step Functions API over HTTP (AWS JSON 1.0: `POST /` with
 * `X-Amz-Target: AWSStepFunctions.<Operation>`), so @aws-sdk/client-sfn works
 * against it unchanged. Signatures are not checked.
 */
export function createStepFunctionsServer(service: LocalStepFunctions): Server {
  return createServer((req, res) => {
    void (async () => {
      try {
        if (req.method !== 'POST') {
          throw new SfnServiceError('UnknownOperationException', 'only POST / with X-Amz-Target is supported', 404);
        }
        const target = String(req.headers['x-amz-target'] ?? '');
        const operation = target.startsWith('AWSStepFunctions.') ? target.slice('AWSStepFunctions.'.length) : '';
        if (!(operation in operations)) {
          throw new SfnServiceError('UnknownOperationException', `operation "${target}" is not supported by the local endpoint`);
        }
        const text = await readBody(req, MAX_BODY_BYTES).catch((err: unknown) => {
          if (err instanceof BodyTooLargeError) throw new SfnServiceError('ValidationException', err.message, 413);
          throw err;
        });
        let body: unknown;
        try {
          body = text.length > 0 ? JSON.parse(text) : {};
        } catch {
          throw new SfnServiceError('SerializationException', 'request body is not valid JSON');
        }
        send(res, 200, dispatch(service, operation as OperationName, body));
      } catch (err) {
        if (err instanceof SfnServiceError) return sendError(res, err);
        const message = err instanceof Error ? err.message : String(err);
        send(res, 500, { __type: 'InternalFailure', message: `local Step Functions endpoint failed: ${message}` });
      }
    })();
  });
}

export interface LocalStepFunctionsEndpointOptions extends StepFunctionsRunOptions {
  handlers: LocalHandlers;
  port?: number;
  dataDir?: string;
  region?: string;
  accountId?: string;
}

export interface LocalStepFunctionsEndpoint {
  endpoint: string;
  port: number;
  service: LocalStepFunctions;
  stop(): Promise<void>;
}

export async function startLocalStepFunctions(options: LocalStepFunctionsEndpointOptions): Promise<LocalStepFunctionsEndpoint> {
  const service = new LocalStepFunctions({
    region: options.region ?? 'us-east-1',
    accountId: options.accountId ?? '000000000000',
    handlers: options.handlers,
    ...(options.functionTimeoutsSeconds !== undefined ? { functionTimeoutsSeconds: options.functionTimeoutsSeconds } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.retryIntervalOverrideMs !== undefined ? { retryIntervalOverrideMs: options.retryIntervalOverrideMs } : {}),
    ...(options.faults ? { faults: options.faults } : {}),
    ...(options.faultOptions ? { faultOptions: options.faultOptions } : {}),
  });
  const server = createStepFunctionsServer(service);
  const port = await listen(server, options.port ?? 0);
  return {
    endpoint: `http://${LOCAL_HOST}:${port}`,
    port,
    service,
    stop: stopOnce(async () => {
      await closeServer(server);
      await service.close();
    }),
  };
}
