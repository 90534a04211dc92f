import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { z } from 'zod';
import type { MapRunItemResult, MapRunOutput, MapRunsPort } from '../../app/ports/map-runs.js';

const ResultFile = z.object({ Key: z.string().min(1), Size: z.number().optional() });
const Manifest = z.object({
  DestinationBucket: z.string().min(1),
  MapRunArn: z.string(),
  ResultFiles: z.object({
    SUCCEEDED: z.array(ResultFile).default([]),
    FAILED: z.array(ResultFile).default([]),
    PENDING: z.array(ResultFile).default([]),
  }),
});

/**
 * A child execution's input or output in a result line: a JSON string (as Step Functions documents the export)
 * or the JSON value itself (as its examples also show it); both are read the same.
 */
const JsonField = z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional();

/** One child execution as the ResultWriter exports it (Transformation NONE). */
const ExportedExecution = z.object({
  ExecutionArn: z.string().optional(),
  Input: JsonField,
  Output: JsonField,
  Status: z.string(),
  Error: z.string().optional(),
  Cause: z.string().optional(),
});

const ItemFields = z.object({ key: z.string().optional(), task: z.object({ billNo: z.string().optional() }).optional() }).passthrough();
const ItemOutput = z.object({ outcome: z.string() }).passthrough();

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A failed or unstarted item still has its key and bill (from its input), with the failure as the reason. */
function resultOf(line: z.infer<typeof ExportedExecution>, pending: boolean): MapRunItemResult {
  const output = ItemOutput.safeParse(parseJson(line.Output));
  if (line.Status === 'SUCCEEDED' && output.success) return output.data as MapRunItemResult;
  const item = ItemFields.safeParse(parseJson(line.Input));
  const reason = pending
    ? 'not run: the batch stopped starting items after too many failures'
    : `${line.Error ?? line.Status}${line.Cause ? `: ${line.Cause}` : ''}`;
  return {
    outcome: 'error',
    ...(item.success && item.data.key ? { key: item.data.key } : {}),
    ...(item.success && item.data.task?.billNo ? { billNo: item.data.task.billNo } : {}),
    ...(line.ExecutionArn ? { executionArn: line.ExecutionArn } : {}),
    reason: reason.slice(0, 2000),
  };
}

async function* lines(s3: S3Client, bucket: string, key: string): AsyncGenerator<string> {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = got.Body as Readable | undefined;
  if (!body) return;
  // One line at a time: a results file of 10,000 executions is never held whole.
  for await (const line of createInterface({ input: body, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.trim() !== '') yield line;
  }
}

/**
 * Every item's result from a map run's ResultWriter files (JSON Lines), read
 * one line at a time. Results the workflow cannot parse become 'error'
 * results naming the file, so a summary never silently drops an item.
 */
export async function* readMapRunResults(s3: S3Client, output: MapRunOutput): AsyncGenerator<MapRunItemResult> {
  const { Bucket, Key } = output.ResultWriterDetails;
  const manifestText = await (await s3.send(new GetObjectCommand({ Bucket, Key }))).Body?.transformToString('utf8');
  const manifest = Manifest.safeParse(parseJson(manifestText));
  if (!manifest.success) {
    const issue = manifest.error.issues[0];
    throw new Error(
      `s3://${Bucket}/${Key}: not a map run manifest (${issue?.path.join('.') || '(root)'}: ${issue?.message}); check the ResultWriter`,
    );
  }
  const files = manifest.data.ResultFiles;
  for (const [status, entries] of [
    ['SUCCEEDED', files.SUCCEEDED],
    ['FAILED', files.FAILED],
    ['PENDING', files.PENDING],
  ] as const) {
    for (const file of entries) {
      for await (const text of lines(s3, manifest.data.DestinationBucket, file.Key)) {
        const line = ExportedExecution.safeParse(parseJson(text));
        if (!line.success) {
          yield { outcome: 'error', reason: `unreadable result line in s3://${manifest.data.DestinationBucket}/${file.Key}` };
          continue;
        }
        yield resultOf(line.data, status === 'PENDING');
      }
    }
  }
}

/**
 * Where a map run that failed wrote its results. Its Catch output is only `{Error, Cause}`, but the
 * ResultWriter wrote a manifest under `<prefix>/<map run id>/` all the same: the newest one under the prefix.
 */
export async function findMapRunOutput(s3: S3Client, results: { bucket: string; prefix: string }): Promise<MapRunOutput | undefined> {
  const folder = `${results.prefix.replace(/\/+$/, '')}/`;
  let newest: { key: string; at: number } | undefined;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: results.bucket, Prefix: folder, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (!object.Key?.endsWith('/manifest.json')) continue;
      const at = object.LastModified?.getTime() ?? 0;
      if (!newest || at >= newest.at) newest = { key: object.Key, at };
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return newest ? { MapRunArn: '', ResultWriterDetails: { Bucket: results.bucket, Key: newest.key } } : undefined;
}

/** The map runs' result files, behind the S3 client that reads them. */
export class MapRunResults implements MapRunsPort {
  constructor(private readonly s3: S3Client) {}

  read(output: MapRunOutput): AsyncGenerator<MapRunItemResult> {
    return readMapRunResults(this.s3, output);
  }

  /** The results a failed map run left under `results.prefix`, if it wrote any. */
  find(results: { bucket: string; prefix: string }): Promise<MapRunOutput | undefined> {
    return findMapRunOutput(this.s3, results);
  }
}
