/**
 * The proxy a server is reached through when its kubeconfig cluster has no proxy-url: the
 * environment's, as client-go reads it (Go's http.ProxyFromEnvironment, with NO_PROXY's CIDRs):
 * HTTPS_PROXY (or https_proxy) for an https:// server, HTTP_PROXY (or http_proxy) for http://;
 * none for localhost or a loopback address, or a host NO_PROXY (no_proxy) names. Pure.
 */
import { BlockList, isIP } from 'node:net';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The proxy URL for `server` from `env`, undefined for none, or `{ problem }` when the variable
 * that applies is not a URL (the sentence names the variable, never its value).
 */
export function proxyFromEnvironment(server: string, env: Env): string | undefined | { problem: string } {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return undefined;
  }
  const https = url.protocol === 'https:';
  const names = https ? ['HTTPS_PROXY', 'https_proxy'] : ['HTTP_PROXY', 'http_proxy'];
  const name = names.find((n) => (env[n] ?? '') !== '');
  if (name === undefined) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (https ? '443' : '80');
  if (!useProxy(host, port, env['NO_PROXY'] || env['no_proxy'] || '')) return undefined;
  const value = env[name]!.trim();
  // Go reads a value without a scheme (proxy:3128) as http://.
  for (const candidate of value.includes('://') ? [value] : [`http://${value}`]) {
    try {
      const proxy = new URL(candidate);
      if (['http:', 'https:', 'socks5:'].includes(proxy.protocol) && proxy.hostname !== '') return candidate;
    } catch {
      // not a URL: the problem below
    }
  }
  return {
    problem: `the environment's ${name} is not a proxy URL (the server has no proxy-url, so client-go would use it): set it to http://HOST:PORT, or add the server's host to NO_PROXY`,
  };
}

/** Whether a request to host:port goes through the environment's proxy (Go's httpproxy useProxy). */
function useProxy(host: string, port: string, noProxy: string): boolean {
  if (host === 'localhost') return false;
  const ipVersion = isIP(host);
  if (ipVersion !== 0 && isLoopback(host, ipVersion)) return false;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return false;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const [, base, bits] = cidr;
      const v = isIP(base!);
      if (v !== 0 && ipVersion === v) {
        const list = new BlockList();
        list.addSubnet(base!, Number(bits), v === 4 ? 'ipv4' : 'ipv6');
        if (list.check(host, v === 4 ? 'ipv4' : 'ipv6')) return false;
      }
      continue;
    }
    if (isIP(entry.replace(/^\[|\]$/g, '')) !== 0) {
      if (entry.replace(/^\[|\]$/g, '') === host) return false;
      continue;
    }
    // host, host:port, .domain, *.domain: "foo.com" matches foo.com and its subdomains, ".foo.com" the subdomains.
    let name = entry;
    let entryPort = '';
    const withPort = /^(.*):(\d+)$/.exec(entry);
    if (withPort) {
      name = withPort[1]!;
      entryPort = withPort[2]!;
    }
    if (entryPort !== '' && entryPort !== port) continue;
    if (isIP(name.replace(/^\[|\]$/g, '')) !== 0) {
      if (name.replace(/^\[|\]$/g, '') === host) return false;
      continue;
    }
    if (name.startsWith('*.')) name = name.slice(1);
    const matchHost = !name.startsWith('.');
    const suffix = matchHost ? `.${name}` : name;
    if (host.endsWith(suffix) || (matchHost && host === name)) return false;
  }
  return true;
}

function isLoopback(host: string, version: number): boolean {
  if (version === 4) return host.startsWith('127.');
  const list = new BlockList();
  list.addAddress('::1', 'ipv6');
  list.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  return list.check(host, 'ipv6');
}
