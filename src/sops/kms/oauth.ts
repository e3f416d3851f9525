/**
 * OAuth 2.0 and JWT for the cloud KMS services that sign in with them (Azure Key Vault, GCP KMS): the
 * token request, its error body, and RS256-signed assertions.
 */
import { createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { httpDetail, jsonOf, num, redact, send, str, expiryFromNow, type CachedToken } from './common.js';

/** The standard OAuth 2.0 error body (RFC 6749 §5.2): `{error, error_description}`. */
export function oauthError(body: string): { code?: string; message?: string } {
  const j = jsonOf(body);
  const code = str(j, 'error');
  // Entra's descriptions carry trace and correlation ids on further lines; the first says why.
  const message = str(j, 'error_description')?.split(/\r?\n/)[0];
  return { ...(code ? { code } : {}), ...(message ? { message } : {}) };
}

/**
 * POSTs a form to an OAuth 2.0 token endpoint and reads `{access_token, expires_in}`. `call` names
 * the request in a network error; a refusal reads "<failed> failed: HTTP ...", with `secrets`
 * (what the form carries) taken out of the endpoint's message.
 */
export async function oauthToken(
  url: string,
  form: Record<string, string>,
  names: { call: string; failed: string },
  secrets: string[],
): Promise<CachedToken> {
  const res = await send(
    url,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    },
    names.call,
  );
  const json = jsonOf(res.body);
  const token = str(json, 'access_token');
  if (res.status !== 200 || !token) {
    const { code, message } = oauthError(res.body);
    throw new Error(`${names.failed} failed: ${httpDetail(res.status, code, message && redact(message, secrets))}`);
  }
  return { value: token, expiresAt: expiryFromNow(num(json, 'expires_in')) };
}

/** Parses a PEM private key (PKCS#1 or PKCS#8, optionally encrypted with `passphrase`). */
export function privateKeyFromPem(pem: string, passphrase?: string): KeyObject {
  return createPrivateKey(passphrase ? { key: pem, format: 'pem', passphrase } : { key: pem, format: 'pem' });
}

/** A compact JWS over the JSON header and claims, signed RS256 (RSASSA-PKCS1-v1_5 with SHA-256). */
export function signJwtRs256(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(input).sign(key);
  return `${input}.${signature.toString('base64url')}`;
}

export function b64url(text: string | Uint8Array): string {
  return Buffer.from(text).toString('base64url');
}
