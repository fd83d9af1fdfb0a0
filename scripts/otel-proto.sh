#!/bin/bash
# otel-proto.sh - the OpenTelemetry protocol's official .proto files for
# heapsnoop agent's OTLP push (user/tracer/agent/otlp.c), taken from
# Debian's package of them, never copied into the repository:
#   otel-proto.sh DIR
# leaves DIR/opentelemetry/proto/{common,resource,profiles,collector/profiles}
# as opentelemetry-proto 1.11.0-1 (Debian forky, arch all, 104 KiB) ships
# them under /usr/include, and protoc-c (scripts/mk/programs.mk) makes C
# from them. The .deb is pinned by its SHA-256: a file of any other
# content is refused, whoever served it. It is looked for, in order, at
#   $OTEL_PROTO_DEB            a copy you have (a machine with no network)
#   the cache                  $HS_CACHE/debs (default /var/cache/heapsnoop/debs,
#                              else ~/.cache/heapsnoop/debs if that is not writable)
#   deb.debian.org's pool      while forky has this version
#   snapshot.debian.org        by the file's SHA-1, for good
# and kept in the cache: the network is needed once per machine, for 104 KiB.
# The messages are the profiles signal's v1development (Alpha): a newer
# opentelemetry-proto may change them, and the pin is changed with otlp.c.
set -u
DIR=${1:?usage: $0 DIR}
DEB=opentelemetry-proto_1.11.0-1_all.deb
SHA256=0b631c6ee2e44446e312ac2f0d8477e13d8a4956b47ce2ef4431dc8e20d2e5b3
SHA1=8ee82e5a23d0b8aa07d60ff50881dbb420a964ef
URLS=(http://deb.debian.org/debian/pool/main/o/opentelemetry-proto/$DEB
	https://snapshot.debian.org/file/$SHA1)
die() { echo "otel-proto: $*" >&2; exit 1; }

good() { [ -f "$1" ] && [ "$(sha256sum < "$1" | cut -d' ' -f1)" = "$SHA256" ]; }

CACHE=${HS_CACHE:-/var/cache/heapsnoop}/debs
if ! mkdir -p "$CACHE" 2> /dev/null || [ ! -w "$CACHE" ]; then
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/heapsnoop/debs
	mkdir -p "$CACHE" || die "no writable cache ($CACHE)"
fi
if [ -n "${OTEL_PROTO_DEB:-}" ]; then
	good "$OTEL_PROTO_DEB" || die "$OTEL_PROTO_DEB is not $DEB (its SHA-256 is not $SHA256)"
	cp "$OTEL_PROTO_DEB" "$CACHE/$DEB.tmp.$$" && mv "$CACHE/$DEB.tmp.$$" "$CACHE/$DEB"
fi
if ! good "$CACHE/$DEB"; then
	command -v curl > /dev/null || die "curl not found (scripts/install-deps.sh installs it)"
	for url in "${URLS[@]}"; do
		echo "otel-proto: fetching $url (104 KiB, once; kept in $CACHE)" >&2
		tmp=$CACHE/$DEB.tmp.$$
		if curl -fsSL --retry 2 -m 120 -o "$tmp" "$url" && good "$tmp"; then
			mv "$tmp" "$CACHE/$DEB"
			break
		fi
		rm -f "$tmp"
		echo "otel-proto: $url: not fetched, or not the pinned file" >&2
	done
	good "$CACHE/$DEB" || die "no $DEB: give a copy in OTEL_PROTO_DEB (its SHA-256 $SHA256)"
fi
mkdir -p "$(dirname "$DIR")" && tmp=$(mktemp -d "${DIR%/}.tmp.XXXXXX") || die "mktemp beside $DIR failed"
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$CACHE/$DEB" "$tmp" || die "dpkg-deb -x $CACHE/$DEB failed"
P=$tmp/usr/include/opentelemetry/proto
for f in common/v1/common.proto resource/v1/resource.proto \
	profiles/v1development/profiles.proto collector/profiles/v1development/profiles_service.proto; do
	[ -f "$P/$f" ] || die "$DEB has no $f"
done
rm -rf "$DIR"
mv "$tmp/usr/include" "$DIR" || die "cannot move the files to $DIR"
