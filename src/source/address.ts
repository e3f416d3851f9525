/**
 * Where a source definition sends the run: the host of a GitRepository's or OCIRepository's URL, or
 * of a Bucket's endpoint, read once and only from URLs that every reader reads the same way (pure).
 *
 * The tree chooses these, and what is sent there can carry a credential, so a URL is refused when
 * two parsers could disagree on its host: a backslash (WHATWG's URL takes it for `/`, git for part
 * of a user name), user info (`https://github.com@evil/` is evil's), control characters or spaces,
 * percent-escapes or non-ASCII in the host, or a host that WHATWG would rewrite (`2130706433`,
 * `0x7f.1`). Schemes are Flux's: `http`, `https` or `ssh` for git (`file://` and git's own
 * transports are not), `oci://` for OCI; a Bucket's endpoint is `host[:port]`.
 *
 * A host on this machine or beside it (loopback, link-local, the cloud metadata services, the
 * unspecified address) is refused unless the run allows it (input allow-private-source-hosts):
 * `privateHostProblem` says so for an address, literal or resolved.
 */
import { isIP } from 'node:net';

export interface SourceAddress {
  scheme: 'http' | 'https' | 'ssh' | 'oci';
  /** The host name, lower-cased; an IPv6 address without its brackets. */
  host: string;
  /** `host[:port]` as git's and curl's URL matching read it, lower-cased (IPv6 in brackets). */
  authority: string;
}

export type SourceKind = 'GitRepository' | 'OCIRepository' | 'Bucket';

const SCHEMES: Record<SourceKind, readonly string[]> = {
  GitRepository: ['http', 'https', 'ssh'],
  OCIRepository: ['oci'],
  Bucket: [],
};

/** Characters no source URL may hold: controls, spaces of any kind, backslashes. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028\u2029\u202f\u205f\u3000\ufeff\\]/;
const HOST_NAME = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?$/;
const IPV6 = /^\[([0-9a-f:.]+)\]$/;
/** ssh's user name (`ssh://git@host/…`), which carries no secret. */
const SSH_USER = /^[a-z0-9._-]+$/i;

function describeChar(c: string): string {
  if (c === '\\') return 'a backslash';
  if (c === ' ') return 'a space';
  return `a control or space character (U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`;
}

/** `host[:port]` checked: the host lower-cased, the port a number 1-65535. */
function authorityOf(text: string): { host: string; authority: string } | string {
  const lower = text.toLowerCase();
  const v6 = /^(\[[^\]]*\])(?::(\d{1,5}))?$/.exec(lower);
  const m = v6 ?? /^([^:]*)(?::(\d{1,5}))?$/.exec(lower);
  if (!m) return `the host and port ${JSON.stringify(text)} are not host[:port]`;
  const [, rawHost, port] = m;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return `the port ${port} is out of range`;
  let host: string;
  const bracketed = IPV6.exec(rawHost!);
  if (bracketed) {
    if (isIP(bracketed[1]!) !== 6) return `${JSON.stringify(rawHost)} is not an IPv6 address`;
    host = bracketed[1]!;
  } else {
    if (!HOST_NAME.test(rawHost!)) {
      return `the host ${JSON.stringify(rawHost)} is not a plain host name or address (letters, digits, "-" and ".")`;
    }
    host = rawHost!.replace(/\.$/, '');
    // Numbers that WHATWG and curl read as an IPv4 address (2130706433, 0x7f.1, 0177.0.0.1, 127.1).
    if (/^[0-9x.]+$/.test(host) && isIP(host) !== 4)
      return `the host ${JSON.stringify(rawHost)} is not a plain address`;
  }
  // Node's fetch (the registry and S3 clients) reads a host the WHATWG way, which rewrites some
  // (`0x7f.1` is 127.0.0.1): the two readings must agree.
  let theirs: string;
  try {
    theirs = new URL(`http://${lower}/`).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  } catch {
    return `the host ${JSON.stringify(rawHost)} is not a valid host name`;
  }
  if (theirs !== host) return `URL parsers disagree on its host (${JSON.stringify(theirs)} or ${JSON.stringify(host)})`;
  return { host, authority: port === undefined ? rawHost! : `${rawHost}:${port}` };
}

/**
 * The address a source's URL (GitRepository, OCIRepository) or endpoint (Bucket) names, or why it
 * is refused: a sentence naming the field.
 */
export function sourceAddress(kind: SourceKind, text: string): SourceAddress | { problem: string } {
  const field = kind === 'Bucket' ? 'spec.endpoint' : 'spec.url';
  // A password in the URL (the tree's, but a token all the same) is not repeated in the message.
  const shown = text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^@/]*@/i, '$1:***@');
  const refuse = (why: string) => ({ problem: `${field} ${JSON.stringify(shown)}: ${why}` });
  const bad = FORBIDDEN.exec(text);
  if (bad) return refuse(`must not contain ${describeChar(bad[0])}`);
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(text)) return refuse('must be plain ASCII (write a host name in its xn-- form)');
  if (kind === 'Bucket') {
    if (/[/?#@%]/.test(text) || /^[a-z][a-z0-9+.-]*:\/\//i.test(text))
      return refuse('must be host[:port], nothing more');
    const a = authorityOf(text);
    return typeof a === 'string' ? refuse(a) : { scheme: 'https', ...a };
  }
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(text);
  if (!m) return refuse(`must be a URL of the form ${SCHEMES[kind].map((s) => `${s}://`).join(', ')}host/path`);
  const scheme = m[1]!.toLowerCase();
  if (!SCHEMES[kind].includes(scheme)) {
    return refuse(
      `the scheme ${scheme}:// is not allowed for a ${kind} (${SCHEMES[kind].map((s) => `${s}://`).join(', ')})`,
    );
  }
  let hostPart = m[2]!;
  const at = hostPart.lastIndexOf('@');
  if (at >= 0) {
    const user = hostPart.slice(0, at);
    if (scheme !== 'ssh' || !SSH_USER.test(user)) {
      return refuse(
        'must not carry a user name or password before the host (credentials come from Secrets and inputs)',
      );
    }
    hostPart = hostPart.slice(at + 1);
  }
  if (hostPart.includes('%')) return refuse('must not percent-encode its host');
  const a = authorityOf(hostPart);
  if (typeof a === 'string') return refuse(a);
  // The WHATWG reading (Node's fetch) must find the same host as ours (git and curl read it as above).
  if (scheme !== 'oci' && scheme !== 'ssh') {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return refuse('is not a valid URL');
    }
    const theirs = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (theirs !== a.host || parsed.username !== '' || parsed.password !== '') {
      return refuse(
        `URL parsers disagree on its host (${JSON.stringify(parsed.hostname)} or ${JSON.stringify(a.host)})`,
      );
    }
  }
  return { scheme: scheme as SourceAddress['scheme'], ...a };
}

const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'metadata.azure.com', 'instance-data']);

/** Why an address (or host name) is on this machine or its cloud's metadata service, or undefined. */
export function privateHostProblem(host: string): string | undefined {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return `${h} is this machine (loopback)`;
  if (METADATA_NAMES.has(h) || h.endsWith('.metadata.google.internal')) return `${h} is a cloud metadata service`;
  const v4 = isIP(h) === 4 ? h : mappedV4(h);
  if (v4 !== undefined) {
    const [a, b] = v4.split('.').map(Number) as [number, number];
    if (a === 127) return `${h} is this machine (loopback)`;
    if (a === 0) return `${h} is the unspecified address (this machine)`;
    if (v4 === '169.254.169.254' || v4 === '100.100.100.200') return `${h} is a cloud metadata service`;
    if (a === 169 && b === 254) return `${h} is link-local`;
    return undefined;
  }
  if (isIP(h) === 6) {
    if (h === '::1' || /^0*:0*:0*:0*:0*:0*:0*:0*1$/.test(h)) return `${h} is this machine (loopback)`;
    if (h === '::' || /^[0:]+$/.test(h)) return `${h} is the unspecified address (this machine)`;
    if (/^fe[89ab][0-9a-f]?:/.test(h)) return `${h} is link-local`;
    if (h === 'fd00:ec2::254') return `${h} is a cloud metadata service`;
  }
  return undefined;
}

/** The IPv4 address an IPv4-mapped or -compatible IPv6 address carries (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
function mappedV4(h: string): string | undefined {
  if (isIP(h) !== 6) return undefined;
  const dotted = /^(?:0*:)*(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (dotted && isIP(dotted[1]!) === 4) return dotted[1];
  const hex = /^(?:0*:)*(?:ffff:)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(h);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}
