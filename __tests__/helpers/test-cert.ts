// A test certificate and key for kubeconfig tests.
import { generateKeyPairSync } from 'node:crypto';

// A self-signed test certificate (public data only); its key is not needed by the checks that use it.
export const CERT = `-----BEGIN CERTIFICATE-----
MIIBmDCCAT2gAwIBAgIUJPqYJTzCiYZsd6EM8aLdrWEOwUswCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVa3ViZWNvbmZpZy1jaGVjay10ZXN0MCAXDTI2MTIwMzE0Mzkw
M1oYDzIxMjYxMTA5MTQzOTAzWjAgMR4wHAYDVQQDDBVrdWJlY29uZmlnLWNoZWNr
LXRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASFJb7fY6hqzqEaJRrv2eN0
T9KXV9J8ko/TH6aWsD3S8UcmGgtdecsfqV8Z3f4WRF3/J8arQr5edjmkZvbdg8Yr
o1MwUTAdBgNVHQ4EFgQUC4pcaC+XXET5SV1zB7BvIU5H/tcwHwYDVR0jBBgwFoAU
C4pcaC+XXET5SV1zB7BvIU5H/tcwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD
AgNJADBGAiEA5NWK7JVyMm4gltoVTqhtv1V2ZiEmh+iRxu6AEsocmF8CIQDl2L+s
3RW0MZYHEw7ikuNCvVfrnPB0DCdmAG0ItUbphg==
-----END CERTIFICATE-----
`;
// A key made for this run: it does not belong to CERT.
export const KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
