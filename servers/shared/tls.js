// TLS material for both servers: TLS_CERT_FILE + TLS_KEY_FILE when given,
// otherwise a self-signed certificate for 127.0.0.1 / localhost / ::1 made at
// start with `selfsigned` (EC P-256, 30 days). k6 is told to trust it with
// insecureSkipTLSVerify (see docs/servers.md, "TLS and k6").
import { readFileSync } from 'node:fs';
import selfsigned from 'selfsigned';

export async function loadTlsMaterial(env = process.env) {
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } = env;
  if (certFile || keyFile) {
    if (!certFile || !keyFile)
      throw new Error('set both TLS_CERT_FILE and TLS_KEY_FILE, or neither for a self-signed certificate');
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), selfSigned: false };
  }
  const notBeforeDate = new Date(Date.now() - 60_000);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 30 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private, selfSigned: true };
}
