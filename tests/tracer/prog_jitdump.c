// SPDX-License-Identifier: MIT
/*
 * prog_jitdump.c - a JIT compiler in miniature for test_jit.sh: two
 * functions made at run time in anonymous executable memory, each keeping
 * the frame-pointer chain and calling the function pointer it is given,
 * described in a jitdump as perf's spec has it (tools/perf/Documentation/
 * jitdump-specification.txt): jit-PID.dump in the working directory,
 * mapped executable (how perf and heapsnoop find it), a header, each
 * function's JIT_CODE_DEBUG_INFO (its call at a known line of a made-up
 * source file, addresses as V8 writes them: code + offset + 0x40) before
 * its JIT_CODE_LOAD.
 *
 *   main -> jitted_outer -> jitted_inner -> alloc_leaf -> malloc(N)
 *
 * 4 blocks of 100000 bytes, kept live to the exit. jitted_outer's records
 * are written before the allocations, jitted_inner's after them (the
 * writer's buffer written out late: heapsnoop names it at the last dump),
 * then a record cut in half at the file's end, which is never read.
 * With "swapped", the header's magic is in the other byte order (a file
 * from a big-endian machine): heapsnoop refuses the file, and says so.
 * Usage: prog_jitdump [swapped]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#define ELF_TEXT_OFFSET 0x40	/* perf's reading of a debug entry's address */

/* fn(size, next, next_arg): calls next(size, next_arg), frame pointer kept. */
#if defined(__x86_64__)
static const uint8_t thunk[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf0,	/* mov %rsi,%rax */
	0x48, 0x89, 0xd6,	/* mov %rdx,%rsi */
	0xff, 0xd0,		/* call *%rax: returns to offset 12 */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};
#define CALL_AT		10	/* the call instruction's offset */
#define EM		62	/* EM_X86_64 */
#elif defined(__aarch64__)
static const uint32_t thunk[] = {
	0xa9bf7bfd,		/* stp x29, x30, [sp, #-16]! */
	0x910003fd,		/* mov x29, sp */
	0xaa0103f0,		/* mov x16, x1 */
	0xaa0203e1,		/* mov x1, x2 */
	0xd63f0200,		/* blr x16: returns to offset 20 */
	0xa8c17bfd,		/* ldp x29, x30, [sp], #16 */
	0xd65f03c0,		/* ret */
};
#define CALL_AT		16
#define EM		183	/* EM_AARCH64 */
#else
#error "prog_jitdump: x86-64 or arm64"
#endif

typedef void *(*jit_fn)(size_t size, void *next, void *next_arg);

static void *keep[4];
static int dump_fd;

__attribute__((noinline)) static void *alloc_leaf(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

static void put(const void *p, size_t n)
{
	if (write(dump_fd, p, n) != (ssize_t)n) {
		perror("prog_jitdump: write");
		exit(1);
	}
}

static void put32(uint32_t v)
{
	put(&v, 4);
}

static void put64(uint64_t v)
{
	put(&v, 8);
}

static void prefix(uint32_t id, uint32_t total)
{
	put32(id);
	put32(total);
	put64(1);
}

/* DEBUG_INFO: the code at @code is @file line @line0, its call at line @line0 + 2. */
static void debug_info(uint64_t code, const char *file, int32_t line0)
{
	const uint64_t off[] = { 0, CALL_AT, CALL_AT + 2 };
	const int32_t line[] = { line0, line0 + 2, line0 + 3 };
	size_t flen = strlen(file) + 1;

	prefix(2, (uint32_t)(16 + 16 + 3 * (16 + flen)));
	put64(code);
	put64(3);
	for (int i = 0; i < 3; i++) {
		put64(code + off[i] + ELF_TEXT_OFFSET);
		put32((uint32_t)line[i]);
		put32(0);
		put(file, flen);
	}
}

static void code_load(uint64_t code, uint64_t index, const char *name)
{
	size_t nlen = strlen(name) + 1;

	prefix(0, (uint32_t)(16 + 40 + nlen + sizeof(thunk)));
	put32((uint32_t)getpid());
	put32((uint32_t)getpid());
	put64(code);
	put64(code);
	put64(sizeof(thunk));
	put64(index);
	put(name, nlen);
	put(thunk, sizeof(thunk));
}

int main(int argc, char **argv)
{
	int swapped = argc > 1 && !strcmp(argv[1], "swapped");
	char path[64];
	uint8_t *code;
	jit_fn outer, inner;

	snprintf(path, sizeof(path), "jit-%d.dump", getpid());
	dump_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (dump_fd < 0) {
		perror("prog_jitdump: jit-PID.dump");
		return 1;
	}
	put32(swapped ? 0x4454694A : 0x4A695444);	/* "JiTD" */
	put32(1);
	put32(40);
	put32(EM);
	put32(0);
	put32((uint32_t)getpid());
	put64(0);
	put64(0);
	/* The marker perf looks for: the file mapped executable. */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0) == MAP_FAILED) {
		perror("prog_jitdump: mmap jit-PID.dump");
		return 1;
	}
	code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code + 0x100, thunk, sizeof(thunk));
	memcpy(code + 0x200, thunk, sizeof(thunk));
	if (mprotect(code, 8192, PROT_READ | PROT_EXEC))
		return 1;
	__builtin___clear_cache((char *)code, (char *)code + 8192);
	outer = (jit_fn)(void *)(code + 0x100);
	inner = (jit_fn)(void *)(code + 0x200);
	debug_info((uint64_t)(uintptr_t)outer, "/jit/chain.src", 10);
	code_load((uint64_t)(uintptr_t)outer, 1, "jitted_outer");
	for (int i = 0; i < 4; i++)
		keep[i] = outer(100000, (void *)inner, (void *)alloc_leaf);
	debug_info((uint64_t)(uintptr_t)inner, "/jit/chain.src", 20);
	code_load((uint64_t)(uintptr_t)inner, 2, "jitted_inner");
	/* A record whose end the writer has not written yet. */
	prefix(0, 200);
	put64(0);
	printf("DONE %p %p %p\n", keep[0], (void *)outer, (void *)inner);
	return 0;
}
