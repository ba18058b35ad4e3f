# The pack's toxiproxy: toxiproxy-server v2.5.0 plus the pack's link and handshake toxics
# (tools/toxiproxy), with tools/toxiproxy/patches applied to the vendored module,
# built the way lib/tools.js builds it for the embedded stack.
# Build context: the repository root (docker-compose.yml, service toxiproxy).
#   docker build -f docker/toxiproxy.Dockerfile -t k6pack-toxiproxy .

# Go as on the machine where the build and the pack's toxics were verified.
FROM golang:1.26.8-bookworm AS build
# Same value as TOXIPROXY_VERSION in common/defaults.js (compose passes it; test/compose.test.js checks both).
ARG TOXIPROXY_VERSION=v2.5.0
WORKDIR /src
COPY tools/toxiproxy/go.mod tools/toxiproxy/go.sum ./
RUN go mod download
COPY tools/toxiproxy/*.go ./
# The image's git applies the patches (/src is no repository, so git apply acts
# as a plain patch tool), in name order, as lib/tools.js does.
COPY tools/toxiproxy/patches/ /patches/
RUN go mod vendor && cd vendor/github.com/Shopify/toxiproxy/v2 && for p in /patches/*.patch; do git apply --whitespace=nowarn "$p" || exit 1; done
RUN CGO_ENABLED=0 go build -mod=vendor -trimpath -ldflags "-X github.com/Shopify/toxiproxy/v2.Version=${TOXIPROXY_VERSION}" -o /out/toxiproxy-server .
# The image has no shell or wget: a static probe serves as its healthcheck.
# Built outside the module (its own directory), standard library only.
WORKDIR /probe
COPY docker/toxiproxy-healthcheck.go ./
RUN CGO_ENABLED=0 go build -trimpath -o /out/healthcheck ./toxiproxy-healthcheck.go

FROM scratch
COPY --from=build /out/toxiproxy-server /out/healthcheck /
# nobody:nogroup; the API and proxy ports are all above 1023.
USER 65534:65534
EXPOSE 8474 14000 14443 14444 15051 15052 15053 17080 17081 17443
ENTRYPOINT ["/toxiproxy-server"]
# The API stays on loopback unless told otherwise (compose says -host 0.0.0.0
# inside its network and publishes the port on 127.0.0.1 only).
CMD ["-host", "127.0.0.1", "-port", "8474"]
