// SPDX-License-Identifier: MIT
/*
 * luacall.c - the name a calling instruction gives the function it calls
 * (luaproto.h's lua_proto__callname), by Lua's own symbolic execution,
 * written anew over a Proto read from outside: 5.4.4's funcnamefromcode,
 * getobjname, findsetreg, gxf, rkname and kname (ldebug.c); 5.1.5's
 * getfuncname, getobjname, symbexec and kname (ldebug.c), symbexec
 * without the checks that only a corrupt Proto fails. The opcode numbers
 * and which opcodes set register A are lopcodes.h's and lopcodes.c's of
 * each version.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "interp/lua/luaproto.h"

/* --- Lua 5.4: op 7 bits, A 8, k 1, B 8, C 8; Bx 17; sJ 25 (lopcodes.h) --- */
enum {
	OP54_MOVE = 0, OP54_LOADK = 3, OP54_LOADKX = 4, OP54_LOADNIL = 8, OP54_GETUPVAL = 9,
	OP54_GETTABUP = 11, OP54_GETTABLE = 12, OP54_GETI = 13, OP54_GETFIELD = 14,
	OP54_SETTABUP = 15, OP54_SETTABLE = 16, OP54_SETI = 17, OP54_SETFIELD = 18,
	OP54_SELF = 20, OP54_MMBIN = 46, OP54_MMBINI = 47, OP54_MMBINK = 48, OP54_UNM = 49,
	OP54_BNOT = 50, OP54_LEN = 52, OP54_CONCAT = 53, OP54_CLOSE = 54, OP54_JMP = 56,
	OP54_EQ = 57, OP54_LT = 58, OP54_LE = 59, OP54_LTI = 62, OP54_LEI = 63, OP54_GTI = 64,
	OP54_GEI = 65, OP54_CALL = 68, OP54_TAILCALL = 69, OP54_RETURN = 70,
	OP54_TFORCALL = 76, OP54__N = 83,
};

/* testAMode of each 5.4 opcode: luaP_opmodes' A column, 0 to OP_EXTRAARG. */
static const char amode54[OP54__N + 1] =
	"11111111110111100001111111111111111111111111110001111100000000000001110001100101110";

/* testMMMode: OP_MMBIN, OP_MMBINI, OP_MMBINK. */
static bool mm54(int op)
{
	return op >= OP54_MMBIN && op <= OP54_MMBINK;
}

#define OP54(i)	((int)((i) & 0x7f))
#define A54(i)	((int)(((i) >> 7) & 0xff))
#define K54(i)	((int)(((i) >> 15) & 1))
#define B54(i)	((int)(((i) >> 16) & 0xff))
#define C54(i)	((int)(((i) >> 24) & 0xff))
#define BX54(i)	((int)((i) >> 15))
#define AX54(i)	((int)((i) >> 7))
#define SJ54(i)	((int)(((i) >> 7) & 0x1ffffff) - ((1 << 24) - 1))

/* 5.4's TMS order (ltm.h), each "__name" as G(L)->tmname holds it. */
static const char *const tmnames54[] = {
	"__index", "__newindex", "__gc", "__mode", "__len", "__eq", "__add", "__sub", "__mul",
	"__mod", "__pow", "__div", "__idiv", "__band", "__bor", "__bxor", "__shl", "__shr",
	"__unm", "__bnot", "__lt", "__le", "__concat", "__call", "__close",
};

enum { TM_INDEX = 0, TM_NEWINDEX = 1, TM_LEN = 4, TM_EQ = 5, TM_UNM = 18, TM_BNOT = 19,
       TM_LT = 20, TM_LE = 21, TM_CONCAT = 22, TM_CLOSE = 24 };

/* --- Lua 5.1: op 6 bits, A 8, C 9, B 9; Bx 18, sBx Bx - 131071 --- */
enum {
	OP51_MOVE = 0, OP51_LOADK = 1, OP51_LOADBOOL = 2, OP51_LOADNIL = 3, OP51_GETUPVAL = 4,
	OP51_GETGLOBAL = 5, OP51_GETTABLE = 6, OP51_SELF = 11, OP51_JMP = 22,
	OP51_CALL = 28, OP51_TAILCALL = 29, OP51_FORLOOP = 31, OP51_FORPREP = 32,
	OP51_TFORLOOP = 33, OP51_SETLIST = 34, OP51_CLOSURE = 36, OP51__N = 38,
};

/* testAMode of each 5.1 opcode (luaP_opmodes' A column). */
static const char amode51[OP51__N + 1] = "11111110001111111111110000111101100011";

#define OP51(i)	((int)((i) & 0x3f))
#define A51(i)	((int)(((i) >> 6) & 0xff))
#define C51(i)	((int)(((i) >> 14) & 0x1ff))
#define B51(i)	((int)(((i) >> 23) & 0x1ff))
#define BX51(i)	((int)((i) >> 14))
#define SBX51(i) (BX51(i) - 131071)
#define ISK51(x) ((x) & 256)

/* luaF_getlocalname: the name of local @n (from 1) alive at @pc, read once. */
static const char *localname(const struct lua_reader *rd, struct lua_proto *p, int n, int pc)
{
	for (int i = 0; i < p->sizelocvars && p->locvars[i].startpc <= pc; i++) {
		struct lua_locvar *v = &p->locvars[i];

		if (pc >= v->endpc || --n)
			continue;
		if (!v->text && lua_str__read(rd, v->name, &v->text))
			return "?";
		return v->text;
	}
	return NULL;
}

static const char *upvalname(const struct lua_reader *rd, struct lua_proto *p, int u)
{
	if (u < 0 || u >= p->sizeupvalues || !p->upvalnames[u])
		return "?";
	if (!p->upvaltexts[u] && lua_str__read(rd, p->upvalnames[u], &p->upvaltexts[u]))
		return "?";
	return p->upvaltexts[u];
}

/* Constant @k if it is a string, else NULL. */
static const char *kstring(const struct lua_reader *rd, struct lua_proto *p, int k)
{
	const struct lua_layout *l = rd->l;
	uint8_t tv[16];
	uint32_t tag;
	uint64_t v;

	if (k < 0 || k >= p->sizek)
		return NULL;
	if (p->ktexts_read[k])
		return p->ktexts[k];
	p->ktexts_read[k] = 1;
	if (rd->read(rd->ctx, p->k_addr + (uint64_t)k * l->tv_size, tv, l->tv_size))
		return NULL;
	if (l->tv_tt_size == 1)
		tag = tv[l->tv_tt];
	else
		memcpy(&tag, tv + l->tv_tt, sizeof(tag));
	if (tag != l->tag_shrstr && tag != l->tag_lngstr)
		return NULL;
	memcpy(&v, tv, sizeof(v));
	if (lua_str__read(rd, v, &p->ktexts[k]))
		p->ktexts[k] = NULL;
	return p->ktexts[k];
}

/* kname: a string constant's text, else "?". */
static const char *kname(const struct lua_reader *rd, struct lua_proto *p, int k)
{
	const char *s = kstring(rd, p, k);

	return s ? s : "?";
}

static const char *objname54(const struct lua_reader *rd, struct lua_proto *p, int lastpc,
			     int reg, const char **name);

static int findsetreg54(struct lua_proto *p, int lastpc, int reg)
{
	int setreg = -1, jmptarget = 0;

	if (mm54(OP54(p->code[lastpc])))
		lastpc--;	/* the previous instruction was not actually executed */
	for (int pc = 0; pc < lastpc; pc++) {
		uint32_t i = p->code[pc];
		int op = OP54(i), a = A54(i), change;

		switch (op) {
		case OP54_LOADNIL:
			change = a <= reg && reg <= a + B54(i);
			break;
		case OP54_TFORCALL:
			change = reg >= a + 2;
			break;
		case OP54_CALL:
		case OP54_TAILCALL:
			change = reg >= a;
			break;
		case OP54_JMP: {
			int dest = pc + 1 + SJ54(i);

			if (dest <= lastpc && dest > jmptarget)
				jmptarget = dest;
			change = 0;
			break;
		}
		default:
			change = op <= OP54__N && amode54[op] == '1' && reg == a;
			break;
		}
		if (change)
			setreg = pc < jmptarget ? -1 : pc;
	}
	return setreg;
}

/* rname: a register's name only if it holds a constant string. */
static const char *rname54(const struct lua_reader *rd, struct lua_proto *p, int pc, int c)
{
	const char *name;
	const char *what = objname54(rd, p, pc, c, &name);

	return what && what[0] == 'c' ? name : "?";
}

/* gxf: "global" when the table is _ENV, else "field". */
static const char *gxf54(const struct lua_reader *rd, struct lua_proto *p, int pc, uint32_t i,
			 bool isup)
{
	const char *name = NULL;

	if (isup)
		name = upvalname(rd, p, B54(i));
	else
		objname54(rd, p, pc, B54(i), &name);
	return name && !strcmp(name, "_ENV") ? "global" : "field";
}

static const char *objname54(const struct lua_reader *rd, struct lua_proto *p, int lastpc,
			     int reg, const char **name)
{
	uint32_t i;
	int pc;

	*name = localname(rd, p, reg + 1, lastpc);
	if (*name)
		return "local";
	pc = findsetreg54(p, lastpc, reg);
	if (pc < 0)
		return NULL;
	i = p->code[pc];
	switch (OP54(i)) {
	case OP54_MOVE:
		if (B54(i) < A54(i))
			return objname54(rd, p, pc, B54(i), name);
		break;
	case OP54_GETTABUP:
		*name = kname(rd, p, C54(i));
		return gxf54(rd, p, pc, i, true);
	case OP54_GETTABLE:
		*name = rname54(rd, p, pc, C54(i));
		return gxf54(rd, p, pc, i, false);
	case OP54_GETI:
		*name = "integer index";
		return "field";
	case OP54_GETFIELD:
		*name = kname(rd, p, C54(i));
		return gxf54(rd, p, pc, i, false);
	case OP54_GETUPVAL:
		*name = upvalname(rd, p, B54(i));
		return "upvalue";
	case OP54_LOADK:
	case OP54_LOADKX: {
		int b = OP54(i) == OP54_LOADK ? BX54(i) :
			pc + 1 < p->sizecode ? AX54(p->code[pc + 1]) : -1;
		const char *s = kstring(rd, p, b);

		if (s) {
			*name = s;
			return "constant";
		}
		break;
	}
	case OP54_SELF:
		*name = K54(i) ? kname(rd, p, C54(i)) : rname54(rd, p, pc, C54(i));
		return "method";
	default:
		break;
	}
	return NULL;
}

static int callname54(const struct lua_reader *rd, struct lua_proto *p, int pc,
		      const char **what, const char **name)
{
	uint32_t i = p->code[pc];
	int tm;

	switch (OP54(i)) {
	case OP54_CALL:
	case OP54_TAILCALL:
		*what = objname54(rd, p, pc, A54(i), name);
		return *what ? 0 : -ENOENT;
	case OP54_TFORCALL:
		*what = *name = "for iterator";
		return 0;
	case OP54_SELF: case OP54_GETTABUP: case OP54_GETTABLE: case OP54_GETI:
	case OP54_GETFIELD:
		tm = TM_INDEX;
		break;
	case OP54_SETTABUP: case OP54_SETTABLE: case OP54_SETI: case OP54_SETFIELD:
		tm = TM_NEWINDEX;
		break;
	case OP54_MMBIN: case OP54_MMBINI: case OP54_MMBINK:
		tm = C54(i);
		break;
	case OP54_UNM: tm = TM_UNM; break;
	case OP54_BNOT: tm = TM_BNOT; break;
	case OP54_LEN: tm = TM_LEN; break;
	case OP54_CONCAT: tm = TM_CONCAT; break;
	case OP54_EQ: tm = TM_EQ; break;
	case OP54_LT: case OP54_LTI: case OP54_GTI: tm = TM_LT; break;
	case OP54_LE: case OP54_LEI: case OP54_GEI: tm = TM_LE; break;
	case OP54_CLOSE: case OP54_RETURN: tm = TM_CLOSE; break;
	default:
		return -ENOENT;
	}
	if (tm < 0 || tm >= (int)(sizeof(tmnames54) / sizeof(tmnames54[0])))
		return -ENOENT;
	*name = tmnames54[tm] + 2;
	*what = "metamethod";
	return 0;
}

/*
 * 5.1's symbexec, tracing @reg up to @lastpc: the last instruction that
 * set it, following forward jumps that do not skip @lastpc. -1: none
 * (the function's final return, a neutral instruction, in Lua).
 */
static int symbexec51(const struct lua_proto *p, int lastpc, int reg)
{
	int last = -1;

	for (int pc = 0; pc < lastpc && pc < p->sizecode; pc++) {
		uint32_t i = p->code[pc];
		int op = OP51(i), a = A51(i), b = 0, c = 0;

		if (op == OP51_GETGLOBAL || op == OP51_LOADK || op == OP51_CLOSURE)
			b = BX51(i);
		else if (op == OP51_JMP || op == OP51_FORLOOP || op == OP51_FORPREP)
			b = SBX51(i);
		else {
			b = B51(i);
			c = C51(i);
		}
		if (op < OP51__N && amode51[op] == '1' && a == reg)
			last = pc;
		switch (op) {
		case OP51_LOADNIL:
			if (a <= reg && reg <= b)
				last = pc;
			break;
		case OP51_SELF:
			if (reg == a + 1)
				last = pc;
			break;
		case OP51_TFORLOOP:
			if (reg >= a + 2)
				last = pc;
			break;
		case OP51_FORLOOP:
		case OP51_FORPREP:
		case OP51_JMP: {
			int dest = pc + 1 + b;

			if (pc < dest && dest <= lastpc)
				pc += b;
			break;
		}
		case OP51_CALL:
		case OP51_TAILCALL:
			if (reg >= a)
				last = pc;
			break;
		case OP51_SETLIST:
			if (c == 0)
				pc++;
			break;
		case OP51_CLOSURE:
			if (b < p->sizep)
				pc += p->child_nups[b];
			break;
		default:
			break;
		}
	}
	return last;
}

/* 5.1's kname: an RK operand that is a string constant, else "?". */
static const char *kname51(const struct lua_reader *rd, struct lua_proto *p, int c)
{
	return ISK51(c) ? kname(rd, p, c & ~256) : "?";
}

static const char *objname51(const struct lua_reader *rd, struct lua_proto *p, int pc,
			     int reg, const char **name)
{
	uint32_t i;
	int at;

	*name = localname(rd, p, reg + 1, pc);
	if (*name)
		return "local";
	at = symbexec51(p, pc, reg);
	if (at < 0)
		return NULL;
	i = p->code[at];
	switch (OP51(i)) {
	case OP51_GETGLOBAL:
		*name = kname(rd, p, BX51(i));
		return "global";
	case OP51_MOVE:
		if (B51(i) < A51(i))
			return objname51(rd, p, at, B51(i), name);
		break;
	case OP51_GETTABLE:
		*name = kname51(rd, p, C51(i));
		return "field";
	case OP51_GETUPVAL:
		*name = upvalname(rd, p, B51(i));
		return "upvalue";
	case OP51_SELF:
		*name = kname51(rd, p, C51(i));
		return "method";
	default:
		break;
	}
	return NULL;
}

static int callname51(const struct lua_reader *rd, struct lua_proto *p, int pc,
		      const char **what, const char **name)
{
	uint32_t i = p->code[pc];
	int op = OP51(i);

	if (op != OP51_CALL && op != OP51_TAILCALL && op != OP51_TFORLOOP)
		return -ENOENT;
	*what = objname51(rd, p, pc, A51(i), name);
	return *what ? 0 : -ENOENT;
}

int lua_proto__callname(const struct lua_reader *rd, struct lua_proto *p, int pc,
			const char **what, const char **name)
{
	*what = *name = NULL;
	if (pc < 0 || pc >= p->sizecode)
		return -ENOENT;
	if (p->l->vm == LUA_VM_54)
		return callname54(rd, p, pc, what, name);
	if (p->l->vm == LUA_VM_51)
		return callname51(rd, p, pc, what, name);
	return -ENOENT;
}
