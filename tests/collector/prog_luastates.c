// SPDX-License-Identifier: MIT
/*
 * prog_luastates.c - two Lua states in one process, each made and run by
 * a thread of its own, as an embedder runs them (Debian's
 * liblua5.4.so.0, luaL_newstate: lauxlib's l_alloc), for
 * tests/collector/test_preload_lua.sh: the collector finds each state in
 * its thread and names each thread's frames from that state's own
 * package.loaded (work is a global of both states, as `function 'work'`).
 * Thread k keeps 10 strings of SIZE[k] bytes (a TString's 24, the
 * characters and their NUL) made in leaf <- work <- the chunk "=states";
 * both threads name their frames at once (their first stacks meet at a
 * barrier). Prints "ready" with the states open, waits for a line on
 * stdin, then _exit(0): the strings live at the exit dump.
 * The C API is declared here (no liblua5.4-dev needed: the runtime
 * library alone, liblua5.4-0).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct lua_State lua_State;
lua_State *luaL_newstate(void);
void luaL_openlibs(lua_State *L);
int luaL_loadbufferx(lua_State *L, const char *buf, size_t sz, const char *name, const char *mode);
int lua_pcallk(lua_State *L, int nargs, int nresults, int errfunc, intptr_t ctx, void *k);
const char *lua_tolstring(lua_State *L, int idx, size_t *len);
void lua_pushcclosure(lua_State *L, int (*fn)(lua_State *), int n);
void lua_setglobal(lua_State *L, const char *name);

/* Line 3: ALLOC, line 6: work's call of leaf, line 9: the chunk's call of work. */
#define CHUNK "local keep = {}\n" \
	"local function leaf(n, size)\n" \
	"\tkeep[n] = string.rep('s', size - 25) -- ALLOC\n" \
	"end\n" \
	"function work(size)\n" \
	"\tfor i = 1, 10 do leaf(i, size) end\n" \
	"end\n" \
	"wait()\n" \
	"work(%d)\n"

static const int size[2] = { 700, 800 };
static pthread_barrier_t meet, done;

/* wait(): the two threads' first stacks at once. */
static int wait_both(lua_State *L)
{
	(void)L;
	pthread_barrier_wait(&meet);
	return 0;
}

static void *run(void *arg)
{
	int k = (int)(intptr_t)arg;
	lua_State *L = luaL_newstate();
	char chunk[512];

	luaL_openlibs(L);
	lua_pushcclosure(L, wait_both, 0);
	lua_setglobal(L, "wait");
	snprintf(chunk, sizeof(chunk), CHUNK, size[k]);
	if (luaL_loadbufferx(L, chunk, strlen(chunk), "=states", NULL) ||
	    lua_pcallk(L, 0, 0, 0, 0, NULL))
		fprintf(stderr, "prog_luastates: %s\n", lua_tolstring(L, -1, NULL));
	pthread_barrier_wait(&done);
	pause();	/* the state stays open */
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	char line[16];

	pthread_barrier_init(&meet, NULL, 2);
	pthread_barrier_init(&done, NULL, 3);
	for (int k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, run, (void *)(intptr_t)k);
	pthread_barrier_wait(&done);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	_exit(0);
}
