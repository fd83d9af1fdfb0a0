// SPDX-License-Identifier: MIT
/*
 * test_otlpenc.c - the agent's OTLP encoder (user/tracer/agent/otlp.h)
 * on inputs the shell test cannot make (tests/agent/test_otlp.sh checks
 * real pushes with the OpenTelemetry project's classes): the container
 * and pod IDs of each way a runtime names its cgroup, and none in text
 * that only looks like one; and a pprof of two processes, built with
 * profbuild.h, turned into a request and read back with protobuf-c:
 * a Resource per pid, the tables at the pprof's ids over entry 0, a
 * sample's stack, the build IDs as attributes, a name that is not UTF-8
 * made so, garbage refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "otlp.h"
#include "profbuild.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#define REQ(x) opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__##x

#define CID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void ids(const char *cg, const char *want_cid, const char *want_pod)
{
	char cid[65], pod[37];

	otlp__cgroup_ids(cg, cid, pod);
	assert_string_equal(cid, want_cid);
	assert_string_equal(pod, want_pod);
}

static void test_cgroup(void **state)
{
	(void)state;
	/* Docker, cgroup v2 (systemd) and v1. */
	ids("0::/system.slice/docker-" CID64 ".scope\n", CID64, "");
	ids("12:memory:/docker/" CID64 "\n11:cpu:/docker/" CID64 "\n", CID64, "");
	/* Kubernetes: systemd's slices (containerd, CRI-O), cgroupfs. */
	ids("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	    "1a2b3c4d_5e6f_4a1b_8c9d_0e1f2a3b4c5d.slice/cri-containerd-" CID64 ".scope\n",
	    CID64, "1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d");
	ids("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	    "1a2b3c4d_5e6f_4a1b_8c9d_0e1f2a3b4c5d.slice/crio-" CID64 ".scope\n",
	    CID64, "1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d");
	ids("4:memory:/kubepods/burstable/pod1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d/" CID64 "\n",
	    CID64, "1a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d");
	/* Podman. */
	ids("0::/machine.slice/libpod-" CID64 ".scope/container\n", CID64, "");
	/* None: a host's, a 32-digit hash, 65 digits, a pod with no UUID. */
	ids("0::/user.slice/user-1000.slice/session-2.scope\n", "", "");
	ids("4:memory:/process_api/f08f418bf325065c7a92fb184f1710ae\n", "", "");
	ids("0::/x-" CID64 "0.scope\n", "", "");
	ids("0::/kubepods/podcast/pod1234\n", "", "");
	ids("", "", "");
}

/* Two processes' samples through profbuild, as heapprof.c makes them. */
static size_t two_processes(unsigned char **gz)
{
	static const struct prof_type types[] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	struct profbuild *b = profbuild__new(types, 4, "inuse_space");
	/* beta's name not UTF-8 (a byte 0xfe), as any path or name may be. */
	struct prof_line fa = { "alpha", "a.c", 10 }, fb = { "beta\xfe\xc3\xa9", "b.c", 20 };
	struct prof_label l1[] = { { "pid", NULL, 100 }, { "comm", "one", 0 } };
	struct prof_label l2[] = { { "pid", NULL, 200 }, { "comm", "two", 0 } };
	int64_t v1[] = { 3, 300, 2, 200 }, v2[] = { 5, 500, 0, 0 }, v3[] = { 7, 700, 7, 700 };
	uint64_t m1, m2, a, c, d, locs[2];
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(b);
	assert_non_null(f);
	m1 = profbuild__mapping(b, &l1, 0x1000, 0x2000, 0, "/bin/one", "aabbcc");
	m2 = profbuild__mapping(b, &l2, 0x5000, 0x6000, 0, "/bin/two", "-");
	a = profbuild__location(b, 100, 0x1100, m1, &fa, 1);
	c = profbuild__location(b, 100, 0x1200, m1, &fb, 1);
	d = profbuild__location(b, 200, 0x5100, m2, &fb, 1);
	locs[0] = a;
	locs[1] = c;
	assert_int_equal(profbuild__sample(b, locs, 2, v1, l1, 2), 0);
	assert_int_equal(profbuild__sample(b, &c, 1, v2, l1, 2), 0);
	assert_int_equal(profbuild__sample(b, &d, 1, v3, l2, 2), 0);
	profbuild__main_mapping(b, m2);	/* its ids no longer its places */
	assert_int_equal(profbuild__write(b, f, 42, NULL), 0);
	fclose(f);
	profbuild__free(b);
	*gz = (unsigned char *)buf;
	return len;
}

static int64_t total(const Opentelemetry__Proto__Profiles__V1development__Profile *p)
{
	int64_t t = 0;

	for (size_t i = 0; i < p->n_samples; i++) {
		assert_int_equal(p->samples[i]->n_values, 1);
		t += p->samples[i]->values[0];
	}
	return t;
}

static void test_request(void **state)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *r;
	const Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary *d;
	unsigned char *gz;
	uint8_t *out;
	size_t len = two_processes(&gz), outlen;
	const char *const *st;

	(void)state;
	assert_int_equal(otlp__request(gz, len, &out, &outlen), 0);
	r = REQ(unpack)(NULL, outlen, out);
	assert_non_null(r);
	d = r->dictionary;
	st = (const char *const *)d->string_table;
	/* Entry 0 of each table, the zero value. */
	assert_string_equal(st[0], "");
	assert_int_equal(d->n_mapping_table, 3);
	assert_int_equal(d->mapping_table[0]->memory_limit, 0);
	assert_int_equal(d->mapping_table[0]->filename_strindex, 0);
	assert_int_equal(d->n_location_table, 4);
	assert_int_equal(d->location_table[0]->address, 0);
	assert_int_equal(d->location_table[0]->n_lines, 0);
	assert_int_equal(d->n_stack_table, 4);
	assert_int_equal(d->stack_table[0]->n_location_indices, 0);
	assert_int_equal(d->function_table[0]->name_strindex, 0);
	assert_int_equal(d->attribute_table[0]->key_strindex, 0);
	assert_int_equal(d->n_link_table, 1);
	/* The build ID an attribute of its mapping alone; "-" none. */
	assert_int_equal(d->n_attribute_table, 2);
	assert_string_equal(st[d->attribute_table[1]->key_strindex], "process.executable.build_id.gnu");
	assert_string_equal(d->attribute_table[1]->value->string_value, "aabbcc");
	for (size_t i = 1; i < d->n_mapping_table; i++) {
		const char *file = st[d->mapping_table[i]->filename_strindex];

		assert_int_equal(d->mapping_table[i]->n_attribute_indices, !strcmp(file, "/bin/one"));
	}
	/* A Resource per pid, four profiles each, the pprof's totals. */
	assert_int_equal(r->n_resource_profiles, 2);
	for (size_t k = 0; k < 2; k++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			r->resource_profiles[k];
		const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
			rp->scope_profiles[0];
		int64_t pid = -1, want[2][4] = { { 8, 800, 2, 200 }, { 7, 700, 7, 700 } };

		for (size_t a = 0; a < rp->resource->n_attributes; a++)
			if (!strcmp(rp->resource->attributes[a]->key, "process.pid"))
				pid = rp->resource->attributes[a]->value->int_value;
		assert_int_equal(pid, k ? 200 : 100);
		assert_int_equal(sp->n_profiles, 4);
		assert_string_equal(st[sp->profiles[3]->sample_type->type_strindex], "inuse_space");
		assert_string_equal(st[sp->profiles[3]->sample_type->unit_strindex], "bytes");
		for (int t = 0; t < 4; t++) {
			assert_int_equal(total(sp->profiles[t]), want[k][t]);
			assert_int_equal(sp->profiles[t]->time_unix_nano, 42);
		}
		/* Zero values left out: pid 100's inuse profiles have one sample. */
		assert_int_equal(sp->profiles[2]->n_samples, k ? 1 : 1);
		assert_int_equal(sp->profiles[0]->n_samples, k ? 1 : 2);
	}
	/* Pid 100's first sample: alpha (leaf) then beta, in their mapping. */
	{
		const Opentelemetry__Proto__Profiles__V1development__Sample *s =
			r->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0];
		const Opentelemetry__Proto__Profiles__V1development__Stack *stk = d->stack_table[s->stack_index];
		const Opentelemetry__Proto__Profiles__V1development__Location *leaf =
			d->location_table[stk->location_indices[0]];

		assert_int_equal(stk->n_location_indices, 2);
		assert_int_equal(leaf->address, 0x1100);
		assert_string_equal(st[d->function_table[leaf->lines[0]->function_index]->name_strindex], "alpha");
		assert_string_equal(st[d->mapping_table[leaf->mapping_index]->filename_strindex], "/bin/one");
	}
	/* Every string UTF-8 (text.h's rule): the bad byte %FE, the good sequence kept. */
	{
		bool beta = false;

		for (size_t i = 0; i < d->n_string_table; i++)
			beta |= !strcmp(st[i], "beta%FE\xc3\xa9");
		assert_true(beta);
	}
	REQ(free_unpacked)(r, NULL);
	free(out);
	/* Not a gzip'ed pprof: refused. */
	assert_int_equal(otlp__request("nope", 4, &out, &outlen), -EINVAL);
	gz[len / 2] ^= 0xff;
	assert_int_equal(otlp__request(gz, len / 2, &out, &outlen), -EINVAL);
	free(gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
