import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { closeServer, LOCAL_HOST } from '../../src/http/listen.js';
import { installObjectVersions, type LockedBucket } from './s3-object-lock.js';
import { serveS3rverContinuationTokens } from './s3rver-continuation-tokens.js';
import { stopOnce } from './stop-once.js';

export interface LocalS3Options {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Where objects are stored; omitted means a temporary folder removed on stop. */
  directory?: string;
  /** Buckets that must exist after start (existing ones are kept with their objects). */
  buckets?: string[];
  /**
   * Buckets that must exist with versioning and Object Lock on, each with its default
   * retention (s3-object-lock.ts); a later start may change the retention.
   */
  lockedBuckets?: LockedBucket[];
}

export interface LocalS3 {
  endpoint: string;
  port: number;
  directory: string;
  stop(): Promise<void>;
}

/** Starts s3rver in this process on 127.0.0.1, with its request log silenced, versioning and Object Lock added. */
export async function startLocalS3(options: LocalS3Options = {}): Promise<LocalS3> {
  // Listings past 1,000 keys need s3rver's continuation tokens, which need this on OpenSSL 3.
  serveS3rverContinuationTokens();
  const temporary = !options.directory;
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'paperclip-s3-'));
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: LOCAL_HOST,
    port: options.port ?? 0,
    silent: true,
    directory,
    vhostBuckets: false,
    configureBuckets: [...(options.buckets ?? []), ...(options.lockedBuckets ?? []).map((b) => b.name)].map((name) => ({
      name,
      configs: [],
    })),
  });
  const versions = installObjectVersions(server, directory);
  for (const bucket of options.lockedBuckets ?? []) await versions.lock(bucket);
  const { port } = await server.run();
  return {
    endpoint: `http://${LOCAL_HOST}:${port}`,
    port,
    directory,
    stop: stopOnce(async () => {
      const http = server.httpServer;
      if (http) await closeServer(http);
      if (temporary) rmSync(directory, { recursive: true, force: true });
    }),
  };
}
