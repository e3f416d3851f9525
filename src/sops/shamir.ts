/**
 * Shamir's secret sharing over GF(2^8) with the AES polynomial, as sops's vendored Hashicorp
 * `shamir` package: each part is the y values followed by one x-coordinate byte.
 */
import { SopsError } from './types.js';

function gfMult(a: number, b: number): number {
  let product = 0;
  let x = a;
  let y = b;
  while (y > 0) {
    if (y & 1) product ^= x;
    x = x & 0x80 ? ((x << 1) ^ 0x1b) & 0xff : (x << 1) & 0xff;
    y >>= 1;
  }
  return product;
}

function gfInverse(a: number): number {
  // a^254 = a^-1 in GF(2^8)
  let result = 1;
  for (let i = 0; i < 254; i++) result = gfMult(result, a);
  return result;
}

export function shamirCombine(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length < 2) throw new SopsError('cannot combine the SOPS data key: less than two Shamir parts');
  const length = parts[0]!.length;
  if (length < 2 || parts.some((p) => p.length !== length)) {
    throw new SopsError('cannot combine the SOPS data key: the Shamir parts have different or too short lengths');
  }
  const xs = parts.map((p) => p[length - 1]!);
  if (new Set(xs).size !== xs.length) throw new SopsError('cannot combine the SOPS data key: duplicate Shamir part');
  const secret = new Uint8Array(length - 1);
  for (let idx = 0; idx < length - 1; idx++) {
    let value = 0;
    for (let i = 0; i < parts.length; i++) {
      let basis = 1;
      for (let j = 0; j < parts.length; j++) {
        if (i === j) continue;
        // Lagrange basis at x = 0: x_j / (x_i + x_j), addition being XOR
        basis = gfMult(basis, gfMult(xs[j]!, gfInverse(xs[i]! ^ xs[j]!)));
      }
      value ^= gfMult(parts[i]![idx]!, basis);
    }
    secret[idx] = value;
  }
  return secret;
}
