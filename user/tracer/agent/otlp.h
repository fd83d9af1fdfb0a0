/* SPDX-License-Identifier: MIT */
/*
 * otlp.h - heapsnoop agent's heap profile as an OpenTelemetry profiles
 * export request (OTLP, the profiles signal's v1development messages:
 * opentelemetry-proto 1.11.0's profiles.proto and profiles_service.proto,
 * which scripts/otel-proto.sh takes from Debian's package and protoc-c
 * makes C of), for push.c's POST to URL/v1development/profiles.
 *
 * Made from the agent's own pprof (heapprof.h), so the two pushes and
 * /debug/pprof/heap say the same thing: its samples grouped by their
 * "pid" label, a ResourceProfiles per process, each with one
 * ScopeProfiles ("heapsnoop") of one Profile per pprof sample type
 * (alloc_objects, alloc_space, inuse_objects, inuse_space, the pprof's
 * names and units), its samples those of the process with a value of
 * that type other than 0. One ProfilesDictionary for the whole request:
 * the pprof's strings, functions, mappings and locations at their pprof
 * ids (ids 1..n, entry 0 the zero value the spec asks for), a Stack per
 * pprof sample (its locations, leaf first), and in the attribute table
 * each mapping's GNU build ID (process.executable.build_id.gnu, hex).
 *
 * Each Resource: service.name and process.executable.name (the file's
 * base name, else the pprof's comm), process.pid, host.name,
 * process.executable.path (/proc/PID/exe) and its build ID, and
 * container.id and k8s.pod.uid where /proc/PID/cgroup names them.
 */
#ifndef HEAPSNOOP_AGENT_OTLP_H
#define HEAPSNOOP_AGENT_OTLP_H

#include <stddef.h>
#include <stdint.h>

#define OTLP_PATH		"/v1development/profiles"
#define OTLP_CONTENT_TYPE	"application/x-protobuf"

/*
 * The ExportProfilesServiceRequest of the gzip'ed pprof @gz (@len bytes,
 * heapprof__write()'s), serialized into *@out (malloc'ed, *@outlen
 * bytes). Returns 0, -ENOMEM, or -EINVAL if the pprof is not one
 * heapprof.h writes (not gzip, not a Profile, an id out of its table).
 */
int otlp__request(const void *gz, size_t len, uint8_t **out, size_t *outlen);

/*
 * The container ID (64 hex digits) and Kubernetes pod UID (8-4-4-4-12,
 * '_' of systemd's slice names as '-') named in @cgroup, the text of a
 * /proc/PID/cgroup: "" where it names none. @cid holds 65 bytes, @pod 37.
 */
void otlp__cgroup_ids(const char *cgroup, char *cid, char *pod);

/* The reply to a request, @body of @len: rejected profiles (0: none) and why in @why. */
int64_t otlp__rejected(const void *body, size_t len, char *why, size_t cap);

#endif /* HEAPSNOOP_AGENT_OTLP_H */
