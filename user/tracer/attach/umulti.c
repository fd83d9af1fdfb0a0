// SPDX-License-Identifier: MIT
/*
 * umulti.c - multi-uprobe links made with the bpf() system call (see
 * umulti.h).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "umulti.h"

/* enum bpf_attach_type's and the link's flag (linux/bpf.h, 6.6). */
#define HS_TRACE_UPROBE_MULTI 48
#define HS_F_UPROBE_MULTI_RETURN 1U

/* union bpf_attr's link_create, as BPF_LINK_CREATE takes it for uprobe_multi. */
struct umulti_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

static int link_create(int prog_fd, const char *path, const uint64_t *offs, uint32_t n,
		       bool ret, uint32_t pid)
{
	union {
		struct umulti_attr a;
		union bpf_attr full;	/* the kernel checks the rest is zero */
	} u;
	int fd;

	memset(&u, 0, sizeof(u));
	u.a.prog_fd = (uint32_t)prog_fd;
	u.a.attach_type = HS_TRACE_UPROBE_MULTI;
	u.a.path = (uint64_t)(uintptr_t)path;
	u.a.offsets = (uint64_t)(uintptr_t)offs;
	u.a.cnt = n;
	u.a.um_flags = ret ? HS_F_UPROBE_MULTI_RETURN : 0;
	u.a.pid = pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &u, sizeof(u));
	return fd < 0 ? -errno : fd;
}

bool umulti__probe(void)
{
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = HS_TRACE_UPROBE_MULTI);
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint64_t off = 0;
	bool ok = false;
	int prog, err;

	/* A kernel before 5.18 loads it: a kprobe program's attach type went unchecked. */
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &lo);
	if (prog < 0)
		return false;
	/*
	 * A kernel with multi-uprobe links fails on the path ("/" is no
	 * file: -EBADF); one without them on the attach type (-EINVAL),
	 * which must not count as a yes. Then, as libbpf asks, pid -1
	 * refused (-EINVAL) where the pid filter is per process (6.7+).
	 */
	err = link_create(prog, "/", &off, 1, false, 0);
	if (err == -EBADF) {
		err = link_create(prog, "/", &off, 1, false, (uint32_t)-1);
		ok = err == -EINVAL;
	}
	if (err >= 0)
		close(err);
	close(prog);
	return ok;
}

void umulti__set_prog(struct bpf_program *prog)
{
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)HS_TRACE_UPROBE_MULTI);
}

bool umulti__is_prog(const struct bpf_program *prog)
{
	return bpf_program__expected_attach_type(prog) ==
	       (enum bpf_attach_type)HS_TRACE_UPROBE_MULTI;
}

int umulti__attach(const struct bpf_program *prog, const char *path, const uint64_t *offs,
		   uint32_t n, bool ret, pid_t pid)
{
	return link_create(bpf_program__fd(prog), path, offs, n, ret,
			   pid < 0 ? 0 : (uint32_t)pid);
}
