// SPDX-License-Identifier: MIT
/*
 * target.c - what heapsnoop is asked to trace, checked before anything is
 * loaded (see target.h): the allocator file to probe, a process or command
 * heapsnoop cannot trace correctly refused with what to do instead.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapsnoop/arch.h"

#include "maps/elffile.h"
#include "maps/procmaps.h"
#include "msg.h"
#include "target.h"

/* What heapsnoop cannot trace correctly, refused with what to do instead. */
static int refuse_foreign(const char *what)
{
	elog("%s is not an " HS_ARCH_NAME " program (32-bit, x32 or another machine): "
	     "heapsnoop traces " HS_ARCH_NAME " processes only (it reads their registers "
	     "and stacks as such); trace a 64-bit build of it", what);
	return -ENOEXEC;
}

/* -p --allocator: a library the process does not map would trace nothing. */
static int check_mapped(pid_t pid, const char *path, const char *given)
{
	struct stat st;
	int n;

	if (stat(path, &st)) {
		elog("cannot read %s: %s", given, strerror(errno));
		return -errno;
	}
	n = proc_maps__maps_file(pid, st.st_dev, st.st_ino);
	if (n == -ESRCH)
		elog("no process with pid %d", pid);
	else if (n == 0)
		elog("process %d does not map %s: nothing of it would be traced (its "
		     "allocator is the one it maps: see /proc/%d/maps)", pid, given, pid);
	return n == 1 ? 0 : n < 0 ? n : -ENOENT;
}

/* Is @pid's program dynamically linked (it will map a C library)? */
static bool exe_is_dynamic(pid_t pid)
{
	struct elf_file *ef;
	char exe[64];
	bool dynamic;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (elf_file__open(exe, &ef))
		return false;
	dynamic = elf_file__is_dynamic(ef);
	elf_file__close(ef);
	return dynamic;
}

/* PF_KTHREAD in the flags of /proc/PID/stat (include/linux/sched.h). */
#define TARGET_PF_KTHREAD	0x00200000u

/*
 * Is @pid a kernel thread (no user memory, no heap)? Its stat's flags
 * say so on every kernel (status's Kthread: line came with 6.0).
 */
static bool is_kthread(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned int flags = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* after the comm, which may hold anything */
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) == 1 &&
	       (flags & TARGET_PF_KTHREAD);
}

/*
 * -p: a kernel thread and a 32-bit process are refused (-EINVAL,
 * -ENOEXEC, said); unreadable: 0.
 */
static int check_process(pid_t pid)
{
	struct elf_file *ef;
	char exe[64], what[64];
	bool native;

	if (is_kthread(pid)) {
		elog("pid %d is a kernel thread: it has no user heap to trace; give a user "
		     "process's pid (ps -ef shows kernel threads' names in [brackets])", pid);
		return -EINVAL;
	}
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	if (elf_file__open(exe, &ef))
		return 0;
	native = elf_file__is_native(ef);
	elf_file__close(ef);
	snprintf(what, sizeof(what), "process %d", pid);
	return native ? 0 : refuse_foreign(what);
}

int target__allocator(bool all, pid_t pid, const char *allocator, char *libpath, size_t cap)
{
	int err;

	if (all) {
		libpath[0] = '\0';	/* each C library found, or --allocator */
		if (allocator && access(allocator, R_OK)) {
			err = -errno;
			elog("cannot read %s: %s", allocator, strerror(errno));
			return err;
		}
	} else if (pid && (err = check_process(pid))) {
		return err;
	} else if (!pid) {
		libpath[0] = '\0';	/* launch mode: each image's, at its exec */
	} else if (allocator) {
		snprintf(libpath, cap, "%s", allocator);
		if (access(libpath, R_OK))
			snprintf(libpath, cap, "/proc/%d/root%s", pid, allocator);
		return check_mapped(pid, libpath, allocator);
	} else {
		err = proc_maps__find_libc(pid, libpath, cap);
		if (err == -ESRCH)
			elog("no process with pid %d", pid);
		else if (err == -EACCES && geteuid())
			elog("cannot read /proc/%d/maps: permission denied (run as root)", pid);
		else if (err == -EACCES)
			elog("cannot read /proc/%d/maps: permission denied even to root (a "
			     "process of another PID or user namespace, or Yama/LSM policy)", pid);
		else if (err && exe_is_dynamic(pid))
			elog("process %d maps no C library yet (caught before its dynamic loader "
			     "mapped it): attach again once it has started", pid);
		else if (err)
			elog("process %d maps no C library (statically linked?): probe its own "
			     "malloc with --allocator /proc/%d/exe", pid, pid);
		return err;
	}
	return 0;
}

int target__check_command(const char *path)
{
	struct elf_file *ef;
	bool native;

	if (elf_file__open(path, &ef))
		return 0;	/* a script: its interpreter's image is checked at exec */
	native = elf_file__is_native(ef);
	elf_file__close(ef);
	return native ? 0 : refuse_foreign(path);
}
