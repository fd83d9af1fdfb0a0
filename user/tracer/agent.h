/* SPDX-License-Identifier: MIT */
/*
 * agent.h - `heapsnoop agent`: heapsnoop as a service (docs/AGENT.md).
 * A session like any other (-a by default, or -p and the filters),
 * sampled by default, that runs until SIGTERM and serves its state on a
 * pull endpoint (httpd.h): /metrics for Prometheus, /debug/pprof/heap
 * for go tool pprof, Parca and Pyroscope's scrapers; and, asked, pushes
 * the heap profile to Pyroscope's /ingest every interval (push.h). With
 * --collectors it serves the live tables of processes running the
 * in-process collector beside the traced ones (collectors.h); past
 * --max-memory it sheds (agent.c's check_memory()).
 *
 * Threads and snapshots. The loop (loop.c) never stops reading events to
 * answer: the HTTP daemon's threads queue requests and wake the loop
 * (httpd__wake_fd()); at its next periodic step the loop forks one child
 * for every request waiting, as --top and the background dumps do
 * (liveview.h, bgdump.h), and goes on. The child reads the trace as it
 * was at the fork (copy-on-write), writes each body into its pipe and
 * exits. One child at a time per route (a heap profile that takes long
 * to name never holds a Prometheus scrape back); one that outlives
 * AGENT_CHILD_MAX_S is killed, counted.
 */
#ifndef HEAPSNOOP_AGENT_H
#define HEAPSNOOP_AGENT_H

#include <stdbool.h>
#include <sys/types.h>

#define AGENT_LISTEN		"127.0.0.1:6068"
#define AGENT_SAMPLE_BYTES	(512 * 1024)	/* Go's runtime.MemProfileRate */
#define AGENT_MAX_MEMORY_MB	256
#define AGENT_CHILD_MAX_S	60
#define AGENT_PUSH_INTERVAL	15	/* --push-interval's default, s */

struct agent;
struct bpf_map;
struct trace;

/*
 * `heapsnoop agent [--listen ADDR:PORT] [--max-memory MB]
 * [--every-allocation] [--push-pyroscope URL [--push-interval S]
 * [--push-name NAME]] [--collectors PATH] [heapsnoop's options]`:
 * @argv[0] is "agent".
 * Returns the exit status (heapsnoop/exit.h), as session__run()'s.
 */
int agent__main(int argc, char **argv);

/* loop.c's hooks; each takes NULL (no agent) and does nothing. */

/* The fd to poll for requests waiting; -1 while a child answers, or none. */
int agent__wake_fd(const struct agent *a);

/*
 * The loop's periodic step at @now (CLOCK_MONOTONIC seconds), after its
 * drain: the children that ended reaped (killed past AGENT_CHILD_MAX_S),
 * the collectors' hellos and ends taken, the tables' memory against
 * --max-memory once a second (shed past it), and for each
 * route with requests waiting and no child, a child forked from @t.
 * @counters: the BPF counters.
 */
void agent__tick(struct agent *a, struct trace *t, const struct bpf_map *counters, double now);

/* Is @pid the agent's child (its events are heapsnoop's own)? */
bool agent__owns(const struct agent *a, pid_t pid);
void agent__gone(struct agent *a, pid_t pid);

#endif /* HEAPSNOOP_AGENT_H */
