# trainsize: multi-stage build on Debian bookworm.
#   build:   compile with meson, run the unit/api/cli tests, stage the install
#   runtime: runtime libraries only, non-root user, no compiler, no curl
#
# deploy/verify-host.sh reads the apt package lists below, so keep one
# "apt-get install" per stage with one package per line.
#
# No "# syntax=" line: it makes BuildKit fetch a frontend image from a
# registry.  debian:bookworm-slim can be made offline with
# deploy/base-image.sh (mmdebstrap; see deploy/README.md).  Its apt settings
# (/etc/apt/apt.conf.d/docker-clean) keep no .deb files; each RUN removes
# the package lists it fetched so no layer carries them.
#
# Both stages start from one base, pinned by the digest of the
# debian:bookworm-slim image index (a tag moves; a digest is the same bytes
# on every build).  Update it on purpose, for Debian's point releases and
# security updates.  deploy/container-test.sh builds from its locally made
# base with --build-arg BASE_IMAGE=<that image>.
ARG BASE_IMAGE=debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251

FROM ${BASE_IMAGE} AS build
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc \
      libc6-dev \
      pkg-config \
      meson \
      ninja-build \
      libmicrohttpd-dev \
      libjansson-dev \
      libcurl4-openssl-dev \
      zlib1g-dev \
      libyaml-dev \
      check \
      libxml2-utils \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Tests run here so a broken build never becomes an image.  On a failure
# Check's assertion lines are printed from meson's full log (its error
# listing keeps a test's last 100 lines only).
RUN meson setup /build --prefix=/usr/local --buildtype=release -Dwerror=true \
 && meson compile -C /build \
 && { meson test -C /build --suite core --suite lib --suite import --suite api --suite server --suite cli --print-errorlogs \
      || { grep -hE '[^ :]+\.c:[0-9]+:[EF]:' /build/meson-logs/testlog.txt; exit 1; }; } \
 && DESTDIR=/staging meson install -C /build --no-rebuild

FROM ${BASE_IMAGE} AS runtime
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12 \
      libjansson4 \
      libcurl4 \
      zlib1g \
      libyaml-0-2 \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/log/apt/* /var/log/dpkg.log /var/cache/debconf/*-old \
 && groupadd --system --gid 10001 trainsize \
 && useradd --system --uid 10001 --gid trainsize --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin trainsize
# bin/trainsize-server, bin/trainsize, share/trainsize/{web,openapi.json}
COPY --from=build /staging/usr/local/ /usr/local/
ENV TRAINSIZE_BIND=0.0.0.0 \
    TRAINSIZE_PORT=8080
EXPOSE 8080
# Numeric user so Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
# The CLI is the probe: it reads TRAINSIZE_PORT, so a changed port still works.
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/trainsize", "health", "--timeout", "4"]
ENTRYPOINT ["/usr/local/bin/trainsize-server"]
