import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in the test process, in front of the real PostgreSQL (or any server): `cut()` drops every
 * connection and refuses new ones, as a database restart does; `restore()` accepts again.
 */
export interface TcpProxy {
  port: number;
  /** `postgres://...` of the target, with host and port replaced by the proxy's. */
  url(targetUrl: string): string;
  /** Destroys every open connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  /** Connections accepted since start. */
  readonly accepted: number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let down = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    accepted += 1;
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url(targetUrl) {
      const u = new URL(targetUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      down = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    get accepted() {
      return accepted;
    },
    async close() {
      down = true;
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
