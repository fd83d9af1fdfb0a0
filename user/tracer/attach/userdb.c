// SPDX-License-Identifier: MIT
/*
 * userdb.c - who -u USER is: its uid, groups and home, looked up without
 * the C library's NSS (launch.h's launch_user).
 *
 * glibc's getpwnam() and getgrouplist() ask the modules nsswitch.conf
 * names (files, systemd, sss, ldap), each a shared library glibc loads at
 * run time: the static heapsnoop (Makefile, STATIC) cannot, as that would
 * load the machine's C library beside its own. So USER is asked of
 * getent(1) when it is installed (glibc's libc-bin, a program of this
 * machine that does load them): `getent passwd USER` for the entry (the
 * passwd(5) line, parsed by fgetpwent(3)), `getent initgroups USER` for
 * the supplementary groups getgrouplist(3) would give. Without getent (a
 * minimal container; musl's getent, which has no initgroups, for the
 * groups), /etc/passwd and /etc/group are read with fgetpwent(3) and
 * fgetgrent(3), which parse the files and need no NSS: a user of another
 * database is then not found, and the message says so.
 *
 * A USER that is all digits is a uid (as getent and useradd take it); it
 * must have a passwd entry too, which gives its group and home.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"
#include "msg.h"

/* More than any getent answer: 65536 groups (NGROUPS_MAX) of 7 digits. */
#define GETENT_MAX (1 << 20)

/* getent(1)'s exit statuses (glibc's getent.c). */
enum { GETENT_OK = 0, GETENT_NOT_FOUND = 2 };

/* What a look-up found: USER's passwd entry and groups (getgrouplist order). */
struct userdb {
	struct passwd pw;	/* its strings point into @buf */
	char *buf;
	gid_t *groups;
	int ngroups;
	int cap;
	const char *source;	/* "getent" or "/etc/passwd": for the messages */
};

/*
 * Run `getent DB KEY` (found on PATH) and read what it writes into a
 * malloc'ed string (*@out, NUL-terminated). Returns its exit status,
 * -ENOENT if there is no getent to run, or another -errno.
 */
static int getent(const char *db, const char *key, char **out)
{
	char *const argv[] = { "getent", (char *)db, (char *)key, NULL };
	posix_spawn_file_actions_t fa;
	size_t len = 0, cap = 4096;
	int p[2], err, status;
	char *buf = NULL;
	pid_t pid;

	*out = NULL;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	err = posix_spawn_file_actions_init(&fa);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	if (!err)	/* its complaints are for us to put in words */
		err = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (!err)
		err = posix_spawnp(&pid, "getent", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (err) {
		close(p[0]);
		/* Not there, or not executable: either way no getent. */
		return err == ENOENT || err == EACCES || err == ENOEXEC ? -ENOENT : -err;
	}
	buf = malloc(cap);
	for (ssize_t n = 1; buf && n > 0;) {
		if (len + 1 == cap) {
			char *b = cap < GETENT_MAX ? realloc(buf, cap * 2) : NULL;

			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
		n = read(p[0], buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			n = 1;
		else if (n > 0)
			len += (size_t)n;
	}
	close(p[0]);
	if (!buf)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!buf)
		return -ENOMEM;
	buf[len] = '\0';
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool is_uid(const char *s, uid_t *uid)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end || errno || v >= (uid_t)-1)
		return false;
	*uid = (uid_t)v;
	return true;
}

/*
 * Keep @pw's entry in @u (its strings copied). Returns 0 or -ENOMEM.
 */
static int keep_passwd(struct userdb *u, const struct passwd *pw)
{
	size_t nl = strlen(pw->pw_name) + 1, dl = strlen(pw->pw_dir) + 1;

	u->buf = malloc(nl + dl);
	if (!u->buf)
		return -ENOMEM;
	memcpy(u->buf, pw->pw_name, nl);
	memcpy(u->buf + nl, pw->pw_dir, dl);
	u->pw = (struct passwd){ .pw_name = u->buf, .pw_dir = u->buf + nl,
				 .pw_uid = pw->pw_uid, .pw_gid = pw->pw_gid };
	return 0;
}

/*
 * The first passwd(5) entry of @f that is @name (or has uid @uid, when
 * @by_uid) into @u. Returns 0, -ENOENT (none), or -ENOMEM.
 */
static int passwd_from(FILE *f, const char *name, bool by_uid, uid_t uid, struct userdb *u)
{
	struct passwd *pw;

	while ((pw = fgetpwent(f)))
		if (by_uid ? pw->pw_uid == uid : !strcmp(pw->pw_name, name))
			return keep_passwd(u, pw);
	return -ENOENT;
}

static int add_group(struct userdb *u, gid_t g)
{
	for (int i = 0; i < u->ngroups; i++)
		if (u->groups[i] == g)
			return 0;
	if (u->ngroups == u->cap) {
		int cap = u->cap ? u->cap * 2 : 16;
		gid_t *v = realloc(u->groups, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		u->groups = v;
		u->cap = cap;
	}
	u->groups[u->ngroups++] = g;
	return 0;
}

/*
 * USER's passwd entry from getent. Returns 0, -ENOENT (getent says there
 * is no such user), -ENOSYS (no getent, or it failed: read the files),
 * or -ENOMEM.
 */
static int passwd_getent(const char *name, bool by_uid, uid_t uid, struct userdb *u)
{
	char *out, key[32];
	FILE *f;
	int st, err;

	if (by_uid)
		snprintf(key, sizeof(key), "%u", (unsigned)uid);
	st = getent("passwd", by_uid ? key : name, &out);
	if (st == -ENOMEM)
		return -ENOMEM;
	if (st == GETENT_NOT_FOUND) {
		free(out);
		return -ENOENT;
	}
	if (st != GETENT_OK) {
		if (st != -ENOENT)
			elog("-u %s: getent passwd failed (%s %d): reading /etc/passwd instead",
			     name, st < 0 ? "error" : "status", st < 0 ? -st : st);
		free(out);
		return -ENOSYS;
	}
	f = fmemopen(out, strlen(out), "r");
	err = f ? passwd_from(f, name, by_uid, uid, u) : -ENOMEM;
	if (f)
		fclose(f);
	free(out);
	return err;
}

/*
 * USER's groups from `getent initgroups USER` ("USER gid gid ..."), after
 * its primary group. Returns 0, -ENOSYS (no answer: read /etc/group) or
 * -ENOMEM.
 */
static int groups_getent(struct userdb *u)
{
	char *out, *p, *end;
	int st, err = 0;

	st = getent("initgroups", u->pw.pw_name, &out);
	if (st != GETENT_OK) {
		free(out);
		return st == -ENOMEM ? -ENOMEM : -ENOSYS;
	}
	p = out + strcspn(out, " \t\n");	/* past USER */
	for (;;) {
		unsigned long g;

		p += strspn(p, " \t\n");
		if (!*p)
			break;
		errno = 0;
		g = strtoul(p, &end, 10);
		if (end == p || errno || g >= (gid_t)-1 || !strchr(" \t\n", *end)) {
			err = -ENOSYS;	/* not glibc's getent: read the file */
			break;
		}
		if ((err = add_group(u, (gid_t)g)))
			break;
		p = end;
	}
	free(out);
	if (err == -ENOSYS)
		u->ngroups = 1;	/* the primary group only, again */
	return err;
}

/* The groups of /etc/group that list USER as a member. */
static int groups_files(struct userdb *u)
{
	FILE *f = fopen("/etc/group", "re");
	struct group *gr;
	int err = 0;

	if (!f)
		return 0;	/* none: its primary group only */
	while (!err && (gr = fgetgrent(f)))
		for (char **m = gr->gr_mem; m && *m && !err; m++)
			if (!strcmp(*m, u->pw.pw_name))
				err = add_group(u, gr->gr_gid);
	fclose(f);
	return err;
}

static void userdb__free(struct userdb *u)
{
	free(u->buf);
	free(u->groups);
	*u = (struct userdb){ 0 };
}

/*
 * Look @name up into @u: getent when there is one, else the files.
 * Returns 0, or -errno after saying why (no such user, out of memory).
 */
static int userdb__lookup(const char *name, struct userdb *u)
{
	bool by_uid;
	uid_t uid = 0;
	FILE *f;
	int err;

	*u = (struct userdb){ .source = "getent" };
	by_uid = is_uid(name, &uid);
	err = passwd_getent(name, by_uid, uid, u);
	if (err == -ENOSYS) {
		u->source = "/etc/passwd";
		f = fopen("/etc/passwd", "re");
		if (!f) {
			err = -errno;
			elog("-u %s: getent is not installed and /etc/passwd cannot be read: %s",
			     name, strerror(errno));
			return err;
		}
		err = passwd_from(f, name, by_uid, uid, u);
		fclose(f);
	}
	if (err == -ENOENT) {
		if (u->source[0] == '/')
			elog("-u %s: no such %s in /etc/passwd (getent is not installed, so "
			     "no other database of nsswitch.conf was asked: install it, Debian's "
			     "libc-bin, for users of LDAP, sssd or systemd)",
			     name, by_uid ? "uid" : "user");
		else
			elog("-u %s: no such %s (getent passwd %s: in none of the databases "
			     "/etc/nsswitch.conf names)", name, by_uid ? "uid" : "user", name);
		return -ENOENT;
	}
	if (!err)
		err = add_group(u, u->pw.pw_gid);
	if (!err && (u->source[0] == '/' || (err = groups_getent(u)) == -ENOSYS))
		err = groups_files(u);
	if (err) {
		elog("out of memory");
		userdb__free(u);
	}
	return err;
}

/* @env without its @key= entry (the caller adds its own). */
static bool env_is(const char *env, const char *key)
{
	size_t n = strlen(key);

	return !strncmp(env, key, n) && env[n] == '=';
}

int launch_user__init(struct launch_user *u, const char *name)
{
	static const char *const keys[] = { "HOME", "USER", "LOGNAME" };
	struct userdb db;
	size_t n = 0, k = 0;
	int err;

	*u = (struct launch_user){ 0 };
	err = userdb__lookup(name, &db);
	if (err)
		return err;
	u->uid = db.pw.pw_uid;
	u->gid = db.pw.pw_gid;
	u->groups = db.groups;
	u->ngroups = db.ngroups;
	db.groups = NULL;
	while (environ && environ[n])
		n++;
	u->envp = calloc(n + 4, sizeof(*u->envp));
	if (!u->envp)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (!env_is(environ[i], "HOME") && !env_is(environ[i], "USER") &&
		    !env_is(environ[i], "LOGNAME"))
			u->envp[k++] = environ[i];
	for (size_t i = 0; i < 3; i++) {
		const char *v = i == 0 ? db.pw.pw_dir : db.pw.pw_name;

		if (asprintf(&u->envp[k], "%s=%s", keys[i], v) < 0) {
			u->envp[k] = NULL;
			goto nomem;
		}
		k++;
	}
	userdb__free(&db);
	return 0;
nomem:
	elog("out of memory");
	userdb__free(&db);
	launch_user__free(u);
	return -ENOMEM;
}

void launch_user__free(struct launch_user *u)
{
	size_t n = 0;

	if (u->envp) {
		while (u->envp[n])
			n++;
		/* The last three are ours (the rest are environ's). */
		for (size_t i = n >= 3 ? n - 3 : 0; i < n; i++)
			free(u->envp[i]);
	}
	free(u->envp);
	free(u->groups);
	*u = (struct launch_user){ 0 };
}
