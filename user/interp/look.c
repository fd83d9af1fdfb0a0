// SPDX-License-Identifier: MIT
/*
 * look.c - a traced process looked at (interp.h's interp__look): its
 * mapped files handed to each room's look in the table's order
 * (ops.h, rooms.c) until one finds its runtime; and the probes the rooms
 * place on an interpreter's functions (interp__probe_at), each once,
 * detached with the rest. docs/DESIGN.md, "Interpreter frames".
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach/umulti.h"
#include "interp/interp_int.h"
#include "maps/procmaps.h"
#include "mapset.h"

int interp__probe_at(struct interp *ip, struct iproc *p, struct bpf_program *prog, bool ret,
		     const char *path, uint64_t off)
{
	pid_t pid = ip->o.follow_forks ? -1 : p->pid;
	struct bpf_link *link;
	int fd = -1;
	struct probe *v;
	struct stat st;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < ip->nprobes; i++)
		if (ip->probes[i].dev == st.st_dev && ip->probes[i].ino == st.st_ino &&
		    ip->probes[i].off == off && ip->probes[i].ret == ret &&
		    (ip->probes[i].pid == pid || ip->probes[i].pid == -1))
			return 0;
	/* alloc_exit, loaded for multi-uprobe links where the kernel has them. */
	if (umulti__is_prog(prog)) {
		link = NULL;
		fd = umulti__attach(prog, path, &off, 1, ret, pid);
		if (fd < 0)
			return fd;
	} else if (!(link = bpf_program__attach_uprobe(prog, ret, pid, path, (size_t)off))) {
		return -errno;
	}
	v = realloc(ip->probes, (ip->nprobes + 1) * sizeof(*v));
	if (!v) {
		bpf_link__destroy(link);
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	ip->probes = v;
	ip->probes[ip->nprobes++] = (struct probe){ .dev = st.st_dev, .ino = st.st_ino, .off = off,
						    .ret = ret, .pid = pid, .link = link,
						    .fd = fd };
	return 0;
}

void interp__look(struct interp *ip, pid_t pid, enum interp_when when)
{
	struct iproc *p = interp__get_proc(ip, pid);
	struct mapset *pm = NULL;

	if (!p || (!ip->o.python && !ip->o.lua))
		return;
	/* An exec stop: the old image is gone (BPF forgot it at the exec). */
	if (when == INTERP_AT_EXEC && p->state != IP_OFF) {
		interp__reset(ip, p);
		p->since = ip->o.head ? ip->o.head(ip->o.ctx) : 0;
	}
	if (when == INTERP_AT_EXEC)
		p->refused = false;
	if (p->state == IP_ON || p->refused)
		return;
	p->looked = true;
	if (proc_maps__load_files(pid, &pm))
		return;
	/*
	 * The first room that finds its runtime (or refuses it, said) has it;
	 * one that holds a state of this image already (CPython found at the
	 * exec stop, waiting for its C library) looks alone: the slot is its.
	 */
	for (const struct interp_ops *const *r = interp_rooms; *r; r++)
		if ((!p->ops || *r == p->ops) && (*r)->look && (*r)->look(ip, p, pm, when))
			break;
	mapset__free(pm);
}
