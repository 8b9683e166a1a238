import net from "node:net";

/**
 * A TCP port free on 127.0.0.1 right now, for a server that must be told its port before it
 * listens (Next, the console server). Another process may take it before that server listens:
 * callers wait for the server's own "ready" line, not just for the port to answer.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
