import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { nonPublicRange } from '../domain/webhook-target.js';
import type { TargetPolicy } from './target-policy.js';

/** An address the target policy refuses: the attempt fails before anything is sent. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_WEBHOOK_REFUSED_ADDRESS';

  constructor(
    readonly address: string,
    readonly range: string,
  ) {
    super(`refused address ${address} (${range})`);
    this.name = 'RefusedAddressError';
  }
}

/** The refusal for one address, or undefined when the policy lets it be connected to. */
export function refusedAddress(address: string, policy: TargetPolicy): RefusedAddressError | undefined {
  if (policy.allowPrivate) return undefined;
  const range = nonPublicRange(address);
  return range === undefined ? undefined : new RefusedAddressError(address, range);
}

/**
 * The `lookup` a webhook request connects through: it resolves the name and refuses when any answer is an
 * address the policy refuses. The addresses checked are the ones the socket then connects to, so a name
 * that resolved to a public address at registration and to a private one now (DNS rebinding) is refused.
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const only = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : (options.family ?? 0);
    policy.lookup(hostname).then(
      (answers) => {
        const wanted = answers
          .map(({ address }) => ({ address, family: isIP(address) }))
          .filter(({ family }) => only === 0 || family === only);
        const first = wanted[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
          return;
        }
        const refusal = wanted.map(({ address }) => refusedAddress(address, policy)).find(Boolean);
        if (refusal !== undefined) callback(refusal, '');
        else if (options.all === true) callback(null, wanted);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
