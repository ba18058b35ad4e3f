// One call of each case through scenarios/lib/rpc-web.js, each outcome printed as a
// JSON line: test/connect-foreign.test.js points it at servers the pack did not write
// (a @connectrpc/connect-node server of connectrpc's Eliza) and at answers that break
// the protocols (no trailer frame, a truncated frame, a wrong content type).
//   -e URL=http://127.0.0.1:PORT -e CASES='[{"name","protocol","service","method","request"}]'
import encoding from 'k6/encoding';
import { rpcCall } from '../../scenarios/lib/rpc-web.js';

export const options = { iterations: 1, vus: 1, insecureSkipTLSVerify: true };

// connectrpc.eliza.v1's Say (test/fixtures/eliza.proto), and the books calls.
const METHODS = {
  Say: { request: { sentence: [1, 'string'] }, response: { sentence: [1, 'string'] } },
};

export default function () {
  for (const c of JSON.parse(__ENV.CASES)) {
    const r = rpcCall({
      protocol: c.protocol,
      transport: c.transport || 'http-keepalive',
      tls: false,
      url: __ENV.URL,
      service: c.service,
      method: c.method,
      methods: c.method === 'Say' ? METHODS : undefined,
      request: c.request,
      timeout: c.timeout || '5s',
    });
    // base64: k6's log line quotes and escapes the message
    const line = JSON.stringify({ name: c.name, ok: r.ok, reason: r.reason, message: r.message });
    console.log(`RESULT ${encoding.b64encode(line)}`);
  }
}
