import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nonPublicRange } from '../../src/domain/webhook-target.js';
import { checkTargetUrl, type Lookup, type TargetPolicy } from '../../src/webhooks/target-policy.js';

/** A resolver answering from a table; any other name is NXDOMAIN, as getaddrinfo reports it. */
function lookupFrom(table: Record<string, string[]>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address }));
  };
  return Object.assign(lookup, { asked });
}

const publicOnly = (lookup: Lookup = lookupFrom({})): TargetPolicy => ({ allowPrivate: false, lookup });

describe('nonPublicRange', () => {
  test('every special-purpose range is named, IPv4 and IPv6', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['::1', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['::', 'unspecified'],
      ['10.0.0.1', 'private'],
      ['10.255.255.255', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['fc00::1', 'private'],
      ['fd12:3456::1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['169.254.0.1', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['febf::1', 'link-local'],
      ['100.64.0.1', 'shared (carrier-grade NAT)'],
      ['100.127.255.255', 'shared (carrier-grade NAT)'],
      ['192.0.2.1', 'documentation'],
      ['198.51.100.7', 'documentation'],
      ['203.0.113.200', 'documentation'],
      ['2001:db8::1', 'documentation'],
      ['3fff::1', 'documentation'],
      ['198.18.0.1', 'benchmarking'],
      ['198.19.255.255', 'benchmarking'],
      ['2001:2::1', 'benchmarking'],
      ['255.255.255.255', 'broadcast'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['ff02::1', 'multicast'],
      ['ff0e::1', 'multicast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.0.9', 'reserved'],
      ['192.88.99.1', 'reserved'],
      ['2001::1', 'reserved'],
      ['64:ff9b:1::1', 'reserved'],
      ['100::1', 'reserved'],
      ['::a00:1', 'reserved'],
      ['fec0::1', 'reserved'],
      ['4000::1', 'reserved'],
      ['not-an-ip', 'not an IP address'],
    ];
    for (const [address, range] of cases) assert.equal(nonPublicRange(address), range, address);
  });

  test('IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address they carry', () => {
    assert.equal(nonPublicRange('::ffff:127.0.0.1'), 'loopback: IPv4-mapped 127.0.0.1');
    assert.equal(nonPublicRange('::ffff:7f00:1'), 'loopback: IPv4-mapped 127.0.0.1');
    assert.equal(nonPublicRange('::ffff:169.254.169.254'), 'link-local: IPv4-mapped 169.254.169.254');
    assert.equal(nonPublicRange('64:ff9b::10.0.0.1'), 'private: NAT64 10.0.0.1');
    assert.equal(nonPublicRange('64:ff9b::c0a8:101'), 'private: NAT64 192.168.1.1');
    assert.equal(nonPublicRange('2002:a9fe:a9fe::1'), 'link-local: 6to4 169.254.169.254');
    for (const address of ['::ffff:8.8.8.8', '64:ff9b::1.1.1.1', '2002:808:808::1']) {
      assert.equal(nonPublicRange(address), undefined, address);
    }
  });

  test('public addresses, including the neighbours of every range, pass', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '169.253.255.255',
      '192.167.255.255',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2a00:1450:4001::200e',
      '2001:200::1',
    ]) {
      assert.equal(nonPublicRange(address), undefined, address);
    }
  });
});

describe('checkTargetUrl', () => {
  test('a public https:// URL passes; every address of its name is checked', async () => {
    const lookup = lookupFrom({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::1'] });
    for (const url of ['https://hooks.example.com/in', 'https://hooks.example.com:8443/a?b=c', 'https://8.8.8.8/x']) {
      assert.equal(await checkTargetUrl(url, publicOnly(lookup)), undefined, url);
    }
    assert.deepEqual(lookup.asked, ['hooks.example.com', 'hooks.example.com']);
  });

  test('only https://, and no user name, password, fragment, spaces or control characters', async () => {
    const cases: Array<[string, unknown]> = [
      ['http://hooks.example.com/', { reason: 'scheme', allowed: ['https'] }],
      ['ftp://hooks.example.com/', { reason: 'scheme', allowed: ['https'] }],
      ['javascript:alert(1)', { reason: 'scheme', allowed: ['https'] }],
      ['https://user:pass@hooks.example.com/', { reason: 'credentials' }],
      ['https://user@hooks.example.com/', { reason: 'credentials' }],
      ['https://hooks.example.com/#part', { reason: 'fragment' }],
      ['https://hooks.example.com/#', { reason: 'fragment' }],
      ['not a url', { reason: 'malformed' }],
      ['/relative/path', { reason: 'malformed' }],
      ['https://', { reason: 'malformed' }],
      ['https://hooks.exa mple.com/', { reason: 'malformed' }],
      ['https://hooks.example.com/\n', { reason: 'malformed' }],
      ['https://hooks.exam\tple.com/', { reason: 'malformed' }],
      [' https://hooks.example.com/', { reason: 'malformed' }],
    ];
    for (const [url, refusal] of cases) assert.deepEqual(await checkTargetUrl(url, publicOnly()), refusal, url);
  });

  test('a literal address must be public, in every notation the URL parser accepts', async () => {
    const cases: Array<[string, string, string]> = [
      ['https://127.0.0.1/', '127.0.0.1', 'loopback'],
      ['https://2130706433/', '127.0.0.1', 'loopback'],
      ['https://0x7f.1/', '127.0.0.1', 'loopback'],
      ['https://10.0.0.1:8443/', '10.0.0.1', 'private'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link-local'],
      ['https://[::1]/', '::1', 'loopback'],
      ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1', 'loopback: IPv4-mapped 127.0.0.1'],
      ['https://[fd00::1]/', 'fd00::1', 'private'],
      ['https://0.0.0.0/', '0.0.0.0', 'unspecified'],
    ];
    for (const [url, address, range] of cases) {
      assert.deepEqual(
        await checkTargetUrl(url, publicOnly()),
        { reason: 'not-public', host: undefined, address, range },
        url,
      );
    }
  });

  test('localhost names and names without a dot are refused without asking DNS', async () => {
    const lookup = lookupFrom({ localhost: ['8.8.8.8'], intranet: ['8.8.8.8'] });
    for (const host of ['localhost', 'LOCALHOST', 'api.localhost', 'localhost.', 'intranet']) {
      const refusal = await checkTargetUrl(`https://${host}/`, publicOnly(lookup));
      assert.equal(refusal?.reason, 'local-name', host);
    }
    assert.deepEqual(lookup.asked, []);
  });

  test('a name is refused when any of its addresses is not public (the sender checks again each time)', async () => {
    const lookup = lookupFrom({
      'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
      'metadata.example.com': ['169.254.169.254'],
      'mapped.example.com': ['::ffff:10.1.2.3'],
    });
    assert.deepEqual(await checkTargetUrl('https://rebind.example.com/', publicOnly(lookup)), {
      reason: 'not-public',
      host: 'rebind.example.com',
      address: '127.0.0.1',
      range: 'loopback',
    });
    const metadata = await checkTargetUrl('https://metadata.example.com/', publicOnly(lookup));
    assert.equal(metadata?.reason === 'not-public' && metadata.range, 'link-local');
    const mapped = await checkTargetUrl('https://mapped.example.com/', publicOnly(lookup));
    assert.equal(mapped?.reason === 'not-public' && mapped.range, 'private: IPv4-mapped 10.1.2.3');
  });

  test('a name that does not resolve, or not in time, is refused', async (t) => {
    const lookup = lookupFrom({ 'empty.example.com': [] });
    assert.deepEqual(await checkTargetUrl('https://nx.example.com/', publicOnly(lookup)), {
      reason: 'unresolved',
      host: 'nx.example.com',
      detail: 'ENOTFOUND',
    });
    assert.deepEqual(await checkTargetUrl('https://empty.example.com/', publicOnly(lookup)), {
      reason: 'unresolved',
      host: 'empty.example.com',
      detail: 'no address',
    });
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const hanging = checkTargetUrl(
      'https://slow.example.com/',
      publicOnly(() => new Promise(() => undefined)),
    );
    t.mock.timers.tick(5000);
    assert.deepEqual(await hanging, { reason: 'unresolved', host: 'slow.example.com', detail: 'no answer within 5 s' });
  });

  test('allowPrivate lifts the address rule and allows http://, without resolving; the rest still holds', async () => {
    const lookup = lookupFrom({});
    const policy = { allowPrivate: true, lookup };
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'https://[::1]/',
      'http://localhost/',
      'http://unresolvable.test/',
    ]) {
      assert.equal(await checkTargetUrl(url, policy), undefined, url);
    }
    assert.deepEqual(lookup.asked, []);
    assert.deepEqual(await checkTargetUrl('ftp://127.0.0.1/', policy), {
      reason: 'scheme',
      allowed: ['https', 'http'],
    });
    assert.deepEqual(await checkTargetUrl('http://u:p@127.0.0.1/', policy), { reason: 'credentials' });
    assert.deepEqual(await checkTargetUrl('http://127.0.0.1/#x', policy), { reason: 'fragment' });
  });
});
