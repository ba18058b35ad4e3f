// grpc.health.v1.Health and server reflection (v1 and v1alpha) for the Connect
// server, so that grpcurl and health probes find it as they find the gRPC server.
// Reflection's answers come from @grpc/reflection's own implementation over the
// same described files (servers/grpc/reflection.js); only the message shapes are
// translated: @bufbuild/protobuf puts a oneof in { case, value }, proto-loader
// names the case in a field of its own.
import { ReflectionV1Implementation } from '@grpc/reflection/build/src/implementations/reflection-v1.js';
import { SERVICE_NAME } from '../grpc/proto.js';
import { HEALTH_SERVICE, REFLECTION_SERVICES, describedDefinition } from '../grpc/reflection.js';
import { registry } from './proto.js';

const SERVING = 1;
const NOT_SERVING = 2;
const SERVICE_UNKNOWN = 3;

export const HealthService = registry.getService(HEALTH_SERVICE);
export const ReflectionServices = REFLECTION_SERVICES.map((name) => registry.getService(name));

// state.serving: false once the server is shutting down.
export function healthImplementation(state) {
  const statusOf = (service) => {
    if (service !== '' && service !== SERVICE_NAME) return SERVICE_UNKNOWN;
    return state.serving ? SERVING : NOT_SERVING;
  };
  return {
    check: ({ service }) => ({ status: statusOf(service) }),
    list: () => ({ statuses: { '': { status: statusOf('') }, [SERVICE_NAME]: { status: statusOf(SERVICE_NAME) } } }),
    // One answer, then the stream ends: a watcher re-asks (no status changes to push but shutdown).
    async *watch({ service }) {
      yield { status: statusOf(service) };
    },
  };
}

const RESPONSES = ['fileDescriptorResponse', 'allExtensionNumbersResponse', 'listServicesResponse', 'errorResponse'];

export function reflectionImplementation() {
  const reflection = new ReflectionV1Implementation(describedDefinition());
  return {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        const { case: kind, value } = request.messageRequest;
        const answer = reflection.handleServerReflectionRequest({
          host: request.host,
          messageRequest: kind,
          [kind]: value,
        });
        const which = RESPONSES.find((k) => answer[k]);
        yield {
          validHost: answer.validHost,
          originalRequest: request,
          messageResponse: which ? { case: which, value: answer[which] } : { case: undefined },
        };
      }
    },
  };
}
