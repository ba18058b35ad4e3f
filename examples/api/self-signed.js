// A self-signed certificate for 127.0.0.1 / localhost (EC P-256, one day), made at
// start by the example servers when they serve TLS: { key, cert } as PEM strings.
import selfsigned from 'selfsigned';

export async function selfSignedPem() {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 24 * 3600 * 1000),
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
