// A free TCP port on loopback, for the local servers tests start (moto, the registry).
import { createServer, type AddressInfo } from 'node:net';

/** A port nothing listens on at the moment of the call (the OS's choice). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  return port;
}
