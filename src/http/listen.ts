import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const LOCAL_HOST = '127.0.0.1';

export function listen(server: Server, port: number, host: string = LOCAL_HOST): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Closes a server and the keep-alive sockets SDK clients leave open, so the
 * port is free when this resolves (plain close() waits for idle sockets).
 */
export function closeServer(server: Server, close: (cb: (err?: Error) => void) => void = (cb) => server.close(cb)): Promise<void> {
  return new Promise((resolve, reject) => {
    close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}

export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}
