/** RFC 3986 URIs and RFC 3987 IRIs (absolute and references), checked in one linear pass per component. */

const HEX = /^[0-9A-Fa-f]$/;

/** RFC 3987 ucschar: the non-ASCII characters an IRI may hold anywhere. */
export function isUcschar(code: number): boolean {
  if (code >= 0xa0 && code <= 0xd7ff) return true;
  if ((code >= 0xf900 && code <= 0xfdcf) || (code >= 0xfdf0 && code <= 0xffef)) return true;
  // %x10000-1FFFD / ... / %xD0000-DFFFD: planes 1 to 13 without their last two code points.
  if (code >= 0x10000 && code < 0xe0000) return (code & 0xffff) <= 0xfffd;
  return code >= 0xe1000 && code <= 0xefffd;
}

/** RFC 3987 iprivate: allowed in a query only. */
export function isPrivate(code: number): boolean {
  return (code >= 0xe000 && code <= 0xf8ff) || (code >= 0xf0000 && code <= 0xffffd) || (code >= 0x100000 && code <= 0x10fffd);
}

const UNRESERVED_ASCII = /^[A-Za-z0-9\-._~]$/;
const SUB_DELIMS = "!$&'()*+,;=";

/**
 * Whether every character of `text` is allowed: unreserved, sub-delims, `extra`, or a valid
 * percent-encoding; with `iri`, also ucschar (and iprivate where `privateAllowed`).
 */
function allowed(text: string, extra: string, iri: boolean, privateAllowed = false): boolean {
  for (let index = 0; index < text.length; ) {
    const char = text[index]!;
    const code = text.codePointAt(index)!;
    if (char === "%") {
      if (!HEX.test(text[index + 1] ?? "") || !HEX.test(text[index + 2] ?? "")) return false;
      index += 3;
      continue;
    }
    const ok =
      UNRESERVED_ASCII.test(char) || SUB_DELIMS.includes(char) || extra.includes(char) || (iri && (isUcschar(code) || (privateAllowed && isPrivate(code))));
    if (!ok) return false;
    index += code > 0xffff ? 2 : 1;
  }
  return true;
}

const DEC_OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

/** A dotted IPv4 address of four dec-octets without leading zeros. */
export function isIpv4(text: string): boolean {
  const parts = text.split(".");
  return parts.length === 4 && parts.every((part) => DEC_OCTET.test(part));
}

/** An RFC 3986 IPv6address: eight groups, or fewer around one `::`, the last two possibly an IPv4 address. */
export function isIpv6(text: string): boolean {
  const halves = text.split("::");
  if (halves.length > 2) return false;
  const groups = (half: string): string[] | undefined => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return false;
  const all = [...head, ...tail];
  let count = all.length;
  const last = all[all.length - 1];
  if (last !== undefined && last.includes(".")) {
    if (!isIpv4(last)) return false;
    all.pop();
    count += 1; // an IPv4 address fills two groups
  }
  if (!all.every((group) => /^[0-9A-Fa-f]{1,4}$/.test(group))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}

function isHost(host: string, iri: boolean): boolean {
  if (host.startsWith("[")) {
    if (!host.endsWith("]")) return false;
    const literal = host.slice(1, -1);
    if (/^[vV][0-9A-Fa-f]+\./.test(literal)) return /^[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/.test(literal);
    return isIpv6(literal);
  }
  return allowed(host, "", iri); // reg-name, which also covers IPv4address
}

function isAuthority(authority: string, iri: boolean): boolean {
  const at = authority.indexOf("@");
  if (at >= 0 && !allowed(authority.slice(0, at), ":", iri)) return false;
  const hostPort = authority.slice(at + 1);
  // The port follows the host's last character: after "]" for an IP literal, else the first ":".
  const close = hostPort.startsWith("[") ? hostPort.indexOf("]") + 1 : 0;
  const colon = hostPort.indexOf(":", close);
  const host = colon < 0 ? hostPort : hostPort.slice(0, colon);
  const port = colon < 0 ? "" : hostPort.slice(colon + 1);
  return /^\d*$/.test(port) && isHost(host, iri);
}

/** RFC 3986 appendix B: scheme, authority, path, query, fragment (linear: each part is one negated class). */
const PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/su;

/** Checks a URI (`absolute`) or URI reference; `iri` allows RFC 3987's non-ASCII characters. */
export function isUri(text: string, options: { absolute: boolean; iri: boolean }): boolean {
  const parts = PARTS.exec(text);
  if (!parts) return false;
  const [, scheme, authority, path = "", query, fragment] = parts;
  const { iri } = options;
  if (scheme === undefined ? options.absolute : !/^[A-Za-z][A-Za-z0-9+\-.]*$/.test(scheme)) return false;
  if (authority !== undefined && !isAuthority(authority, iri)) return false;
  if (!allowed(path, ":@/", iri)) return false;
  // Without a scheme, a colon in the first segment would have been read as one.
  if (query !== undefined && !allowed(query, ":@/?", iri, true)) return false;
  return fragment === undefined || allowed(fragment, ":@/?", iri);
}
