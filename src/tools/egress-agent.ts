import { Agent, buildConnector } from 'undici';
import type { EgressGuard } from './egress.js';

/**
 * An undici Agent whose every new connection goes through the egress guard: the host of the
 * connection (the request's, or a redirect's) is resolved and every address checked, then the
 * socket is opened to exactly the checked address. The name is kept for TLS (SNI and certificate
 * check) and the Host header, so HTTPS works as before. A refusal fails the request with the guard's
 * `egress_denied` FlowError as the fetch error's cause.
 */
export function createGuardedAgent(guard: EgressGuard): Agent {
  const connector = buildConnector({});
  return new Agent({
    connect(options, callback) {
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      guard.resolve(options.hostname, port).then(
        ({ address }) => connector({ ...options, hostname: address }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
}
