/* What a child leaves behind: kgate is a child subreaper, and so is every child it
 * starts (a selftest child, an ab side, a case worker), set between fork and exec or case code.
 * A process a child's code forks, double-forks or moves to a session of its own (setsid) stays
 * under that child while the child lives: its orphans are reparented to the child, not to init
 * and not to kgate. Only when the child ends do they come to kgate, so a direct child of kgate
 * that kgate did not start (kg_reap_track) is an orphan of a child that has ended: the sweep
 * kills it, and what it started in turn, never a living sibling's descendant (those are under
 * the sibling). The process group kill of kg_child_wait and the worker stays the first step;
 * the sweep takes what left the group. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/kg_core.h"

#define RP_MAX_TRACKED 256 /* children kgate started that are not reaped yet */
#define RP_MAX_ROUNDS 64   /* sweeps of one end: each takes the next generation */
#define RP_MAX_FOUND 512   /* orphans taken per round */

static pthread_mutex_t rp_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t rp_tracked[RP_MAX_TRACKED];
static size_t rp_n;

void kg_reap_init(void)
{
    static bool done;
    if (!done) { /* failing (an old kernel): orphans go to init as before; the group kill stays */
        done = true;
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

void kg_reap_child_setup(void)
{
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* async-signal-safe: after fork */
    rp_n = 0; /* the parent's children are not this process's */
}

void kg_reap_track(pid_t pid)
{
    pthread_mutex_lock(&rp_lock);
    if (rp_n < RP_MAX_TRACKED)
        rp_tracked[rp_n++] = pid;
    pthread_mutex_unlock(&rp_lock);
}

void kg_reap_untrack(pid_t pid)
{
    pthread_mutex_lock(&rp_lock);
    for (size_t i = 0; i < rp_n; i++)
        if (rp_tracked[i] == pid) {
            rp_tracked[i] = rp_tracked[--rp_n];
            break;
        }
    pthread_mutex_unlock(&rp_lock);
}

static bool rp_is_tracked(pid_t pid)
{
    bool hit = false;
    pthread_mutex_lock(&rp_lock);
    for (size_t i = 0; i < rp_n && !hit; i++)
        hit = rp_tracked[i] == pid;
    pthread_mutex_unlock(&rp_lock);
    return hit;
}

/* /proc/PID/stat: its parent and state ("pid (comm) S ppid ...": comm may hold ')'). */
static bool rp_stat(pid_t pid, pid_t *ppid, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    int pp = 0;
    if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
        return false;
    *ppid = (pid_t)pp;
    return true;
}

/* This process's direct children it did not start (orphans reparented to it). */
static size_t rp_orphans(pid_t *out, bool *zombie, size_t cap)
{
    size_t n = 0;
    pid_t self = getpid();
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    for (struct dirent *e; n < cap && (e = readdir(d));) {
        char *end = NULL, st = 0;
        long v = strtol(e->d_name, &end, 10);
        pid_t pp = 0;
        if (v <= 0 || *end || !rp_stat((pid_t)v, &pp, &st) || pp != self || rp_is_tracked((pid_t)v))
            continue;
        zombie[n] = st == 'Z';
        out[n++] = (pid_t)v;
    }
    closedir(d);
    return n;
}

int kg_reap_orphans(const char *who)
{
    pid_t found[RP_MAX_FOUND];
    bool zombie[RP_MAX_FOUND];
    int killed = 0;
    pid_t first = 0;
    for (int round = 0; round < RP_MAX_ROUNDS; round++) {
        size_t n = rp_orphans(found, zombie, RP_MAX_FOUND);
        if (n == 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (!zombie[i]) {
                (void)kill(found[i], SIGKILL); /* its own children come to us next round */
                killed++;
                first = first ? first : found[i];
            }
            while (waitpid(found[i], NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    if (killed)
        fprintf(stderr,
                "kgate: %s: killed %d process(es) an ended child left running outside "
                "its process group (first: pid %d)\n",
                who, killed, (int)first);
    return killed;
}
