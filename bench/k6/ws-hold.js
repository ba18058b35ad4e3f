// For bench/scale.js: VUS VUs each holding one graphql-transport-ws socket
// (the pack's GraphqlWs) for SECONDS, a book query every 5 s, so the bench can
// read k6's memory per VU holding a socket.
import { BOOK_QUERY, validateBook } from '../../scenarios/lib/queries.js';
import { pause } from '../../scenarios/lib/sessions.js';
import { GraphqlWs, wsUrl } from '../../scenarios/lib/ws.js';
import { setting } from '../../common/settings.js';

const SECONDS = setting(__ENV, 'SECONDS', 10);

export const options = {
  scenarios: {
    hold: {
      executor: 'per-vu-iterations',
      vus: setting(__ENV, 'VUS', 100),
      iterations: 1,
      maxDuration: `${SECONDS + 60}s`,
    },
  },
};

export default async function () {
  const ws = new GraphqlWs(wsUrl(false));
  await ws.open();
  const end = Date.now() + SECONDS * 1000;
  for (let i = 0; i < 1000 && Date.now() < end; i++) {
    await ws.execute({ query: BOOK_QUERY, variables: { id: 'book-1' }, validate: validateBook('book-1') });
    await pause(Math.min(5000, Math.max(0, end - Date.now())));
  }
  await ws.close();
}
