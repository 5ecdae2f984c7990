import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may point (docs/decisions/webhook-sender.md), as rules without I/O: public addresses only, judged from the
 * URL's text and from the addresses its host resolves to. The resolving is the caller's (webhooks/): at
 * registration and by the sender before it connects, so a name that later resolves to a private address
 * (DNS rebinding) is still refused.
 */

function blockList(subnets: readonly string[]): BlockList {
  const list = new BlockList();
  for (const subnet of subnets) {
    const [network = '', prefix] = subnet.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

/** Ranges that are not public (IANA special-purpose registries), by name; the first that matches names it. */
const NOT_PUBLIC: readonly (readonly [string, BlockList])[] = [
  ['loopback', blockList(['127.0.0.0/8', '::1/128'])],
  ['unspecified', blockList(['0.0.0.0/8', '::/128'])],
  ['private', blockList(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'])],
  ['link-local', blockList(['169.254.0.0/16', 'fe80::/10'])],
  ['shared (carrier-grade NAT)', blockList(['100.64.0.0/10'])],
  ['documentation', blockList(['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32', '3fff::/20'])],
  ['benchmarking', blockList(['198.18.0.0/15', '2001:2::/48'])],
  ['broadcast', blockList(['255.255.255.255/32'])],
  ['multicast', blockList(['224.0.0.0/4', 'ff00::/8'])],
  // IETF protocol assignments, the old 6to4 relay, class E, local-use NAT64.
  ['reserved', blockList(['192.0.0.0/24', '192.88.99.0/24', '240.0.0.0/4', '2001::/23', '64:ff9b:1::/48'])],
];

/** IPv6 forms that carry an IPv4 address, judged by it: where the packets end up. */
const EMBEDDING: readonly (readonly [string, BlockList, (groups: number[]) => [number, number]])[] = [
  ['IPv4-mapped', blockList(['::ffff:0:0/96']), (groups) => [groups[6] ?? 0, groups[7] ?? 0]],
  ['NAT64', blockList(['64:ff9b::/96']), (groups) => [groups[6] ?? 0, groups[7] ?? 0]],
  ['6to4', blockList(['2002::/16']), (groups) => [groups[1] ?? 0, groups[2] ?? 0]],
];

/** Only 2000::/3 is allocated for global unicast; the rest of IPv6 is reserved or special. */
const GLOBAL_UNICAST = blockList(['2000::/3']);

/** The eight 16-bit groups of an IPv6 address (the URL parser writes it in canonical hexadecimal form first). */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const parse = (part: string | undefined) =>
    part === undefined || part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const [head, tail] = canonical.split('::');
  const start = parse(head);
  if (tail === undefined) return start;
  const end = parse(tail);
  return [...start, ...Array<number>(8 - start.length - end.length).fill(0), ...end];
}

const ipv4Of = ([high, low]: [number, number]) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * The non-public range an IP address is in (`loopback`, `private`, …), or undefined when it is public. For
 * the sender too: it calls this for every address a name resolved to, before it connects.
 */
export function nonPublicRange(address: string): string | undefined {
  // A zone (`fe80::1%eth0`) only ever qualifies a link-local address.
  const bare = address.split('%')[0] ?? '';
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (type === 'ipv6') {
    for (const [form, list, embedded] of EMBEDDING) {
      if (!list.check(bare, type)) continue;
      const ipv4 = ipv4Of(embedded(ipv6Groups(bare)));
      const range = nonPublicRange(ipv4);
      return range === undefined ? undefined : `${range}: ${form} ${ipv4}`;
    }
  }
  for (const [name, list] of NOT_PUBLIC) if (list.check(bare, type)) return name;
  if (type === 'ipv6' && !GLOBAL_UNICAST.check(bare, type)) return 'reserved';
  return undefined;
}

/** Why a URL is refused as a webhook target; the error catalogue words it. */
export type UrlRefusal =
  | { readonly reason: 'malformed' }
  | { readonly reason: 'scheme'; readonly allowed: readonly string[] }
  | { readonly reason: 'credentials' }
  | { readonly reason: 'fragment' }
  | { readonly reason: 'local-name'; readonly host: string }
  | {
      readonly reason: 'not-public';
      readonly host: string | undefined;
      readonly address: string;
      readonly range: string;
    }
  | { readonly reason: 'unresolved'; readonly host: string; readonly detail: string };

/** Spaces and control characters: the URL parser would drop some silently, so what is stored could differ. */
const INVISIBLE = /[\s\p{Cc}]/u;

/**
 * What the URL's text alone says of it as a webhook target: a refusal; undefined when it may be used; or the
 * host name whose addresses decide (`resolve`: judge them with addressRefusal).
 */
export function judgeTargetUrl(
  text: string,
  allowPrivate: boolean,
): UrlRefusal | { readonly resolve: string } | undefined {
  if (INVISIBLE.test(text) || !URL.canParse(text)) return { reason: 'malformed' };
  const url = new URL(text);
  const allowed = allowPrivate ? ['https', 'http'] : ['https'];
  if (!allowed.includes(url.protocol.slice(0, -1))) return { reason: 'scheme', allowed };
  if (url.username !== '' || url.password !== '') return { reason: 'credentials' };
  // A fragment is never sent over HTTP; one here is a mistake (the parser hides an empty one: read the text).
  if (text.includes('#')) return { reason: 'fragment' };
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const range = nonPublicRange(host);
    return range === undefined ? undefined : { reason: 'not-public', host: undefined, address: host, range };
  }
  // `localhost` names never leave the machine (RFC 6761); a name without a dot is completed by local search domains.
  const name = host.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.')) return { reason: 'local-name', host };
  return { resolve: host };
}

/** The refusal of a host by the first of its addresses that is not public; undefined when all are. */
export function addressRefusal(host: string, addresses: readonly string[]): UrlRefusal | undefined {
  for (const address of addresses) {
    const range = nonPublicRange(address);
    if (range !== undefined) return { reason: 'not-public', host, address, range };
  }
  return undefined;
}
