/* Case isolation (gate.h): the parent never touches CUDA; a worker forked from it runs the
 * gates, one (gate, case) request at a time, and sends typed results back over a pipe. A fault
 * (signal, exit, dead CUDA context, watchdog timeout) costs that case's verdict and the worker,
 * which is replaced by a fresh fork; the parent keeps the report.
 *
 * Messages are {uint32 type, uint32 length, payload}. Parent -> worker: RUN {gate, opts, case}
 * (pointers: the worker is a fork, they are valid there), END {gate, complete}, QUIT. Worker ->
 * parent: DEVICE, ROW, EXTRA (a report extra the gate set), BEGIN_FAIL, ENDED. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/report_keys.h"
#include "driver/driver.h"
#include "driver/worker_int.h"

enum { WK_RUN = 1, WK_END, WK_QUIT, WK_DEVICE, WK_ROW, WK_EXTRA, WK_BEGIN_FAIL, WK_ENDED };

#define WK_DEFAULT_TIMEOUT_S 120.0

typedef struct {
    int verdict;
    int last;             /* the worker exits after this message (dead context) */
    char fault_class[16]; /* "" or "cuda" */
    char cuda_error[64];
    uint32_t msg_len, fig_len, data_len;
} wk_row_head;

/* SIGINT/SIGTERM: the one flag (core/interrupt.c). */
#define wk_interrupted kg_interrupted()

/* ---- framing ----------------------------------------------------------------------------- */

static int wk_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The worker's side (blocking reads of the parent's commands). */
static int wk_read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR && !wk_interrupted)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int wk_send(int fd, uint32_t type, const void *a, size_t na, const void *b, size_t nb)
{
    uint32_t h[2] = { type, (uint32_t)(na + nb) };
    if (wk_write_all(fd, h, sizeof h) < 0 || (na && wk_write_all(fd, a, na) < 0) ||
        (nb && wk_write_all(fd, b, nb) < 0))
        return -1;
    return 0;
}

/* ---- the worker (child) ------------------------------------------------------------------ */

typedef struct {
    const struct kg_gate *g;
    const void *opts;
    const kg_case_desc *d;
    int header; /* the gate's table header is not printed yet */
} wk_run_msg;

typedef struct {
    const struct kg_gate *g;
    int complete;
} wk_end_msg;

typedef struct { /* ENDED's head; the error message follows */
    int rc;
    double begin_s, end_s; /* the session's gate->begin and gate->end */
} wk_ended_head;

static int wk_res_fd = -1, wk_cmd_fd = -1;

/* A process that case code forks (a helper that outlives the case) must not hold the worker's
 * ends of the protocol pipes: the parent would never see them close. exec'd helpers lose them
 * by O_CLOEXEC; plain forks here. The parent also watches the worker's pid (wk_wait), so a
 * helper holding some other copy never turns a death into a timeout. */
static void wk_atfork_child(void)
{
    if (wk_res_fd >= 0)
        close(wk_res_fd);
    if (wk_cmd_fd >= 0)
        close(wk_cmd_fd);
    wk_res_fd = wk_cmd_fd = -1;
}

/* Report extras the gates set in the worker travel to the parent's report. */
static void wk_forward_extra(const char *key, const cJSON *value)
{
    char *text = cJSON_PrintUnformatted(value);
    if (text) {
        fflush(stdout);
        (void)wk_send(wk_res_fd, WK_EXTRA, key, strlen(key) + 1, text, strlen(text));
    }
    cJSON_free(text);
}

/* A sticky CUDA error leaves the context unusable: every later call fails with it. */
static bool wk_context_dead(char *name, size_t n)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        return false;
    (void)cudaGetLastError(); /* a non-sticky error is returned once; a sticky one stays */
    if (cudaDeviceSynchronize() == cudaSuccess)
        return false;
    snprintf(name, n, "%s", cudaGetErrorName(e));
    return true;
}

static void wk_send_row(kg_case_result *res, cJSON *fig, const struct kg_gate *g, int last,
                        const char *cuda_error)
{
    char *ft = fig ? cJSON_PrintUnformatted(fig) : NULL;
    size_t dn = res->data && g->result_size ? g->result_size : 0;
    char *buf = NULL;
    wk_row_head h = { .verdict = (int)res->verdict, .last = last };
    if (cuda_error) {
        snprintf(h.fault_class, sizeof h.fault_class, "cuda");
        snprintf(h.cuda_error, sizeof h.cuda_error, "%s", cuda_error);
    }
    h.msg_len = (uint32_t)strlen(res->message);
    h.fig_len = ft ? (uint32_t)strlen(ft) : 0;
    h.data_len = (uint32_t)dn;
    size_t total = sizeof h + h.msg_len + h.fig_len + dn;
    /* The copy is flattened where it is aligned for its type, then packed after the message
     * and figures (at any offset): result_flatten never sees a misaligned struct. */
    void *flat = dn ? malloc(dn) : NULL;
    if ((!dn || flat) && (buf = malloc(total))) {
        char *p = buf;
        memcpy(p, &h, sizeof h), p += sizeof h;
        memcpy(p, res->message, h.msg_len), p += h.msg_len;
        if (ft)
            memcpy(p, ft, h.fig_len), p += h.fig_len;
        if (dn) {
            memcpy(flat, res->data, dn);
            if (g->result_flatten)
                g->result_flatten(flat);
            memcpy(p, flat, dn);
        }
        fflush(stdout);
        fflush(stderr);
        /* Test hook (tests/test_isolation.c): die in the middle of this case's message. */
        const char *cut = getenv("KGATE_TEST_CUT_ROW");
        if (cut && kg_phase_is_case(cut)) {
            uint32_t hd[2] = { WK_ROW, (uint32_t)total };
            (void)wk_write_all(wk_res_fd, hd, sizeof hd);
            (void)wk_write_all(wk_res_fd, buf, total / 2);
            _exit(0);
        }
        (void)wk_send(wk_res_fd, WK_ROW, buf, total, NULL, 0);
    }
    free(buf);
    free(flat);
    cJSON_free(ft);
}

static void wk_run_one(kg_gate_session *s, const wk_run_msg *m, const kg_gate_env *env)
{
    kg_case_result res;
    cJSON *fig = NULL;
    char cuda_error[64];
    if (s->g != m->g) {
        if (s->g)
            (void)kg_session_end(s, env, KG_EPARTIAL);
        int rc = kg_session_begin(s, m->g, m->opts, env, m->header);
        if (rc < 0) {
            char msg[2048];
            snprintf(msg, sizeof msg, "%s", kg_error_last());
            s->g = NULL;
            fflush(stdout);
            (void)wk_send(wk_res_fd, WK_BEGIN_FAIL, &rc, sizeof rc, msg, strlen(msg) + 1);
            return;
        }
    }
    int rc = kg_session_case(s, m->d, env, &res, &fig);
    if (rc < 0) { /* out of memory: the case is an ERROR, the worker goes */
        res.verdict = KG_VERDICT_ERROR;
        snprintf(res.message, sizeof res.message, "%s", kg_error_last());
    }
    /* After every case, not only an ERROR: a kernel that faults after the verdict (in
     * teardown, say) must cost this case its verdict, not the next case its context. */
    bool dead = env->dev && wk_context_dead(cuda_error, sizeof cuda_error);
    wk_send_row(&res, fig, m->g, dead || rc < 0, dead ? cuda_error : NULL);
    cJSON_Delete(fig);
    if (res.data && m->g->result_free)
        m->g->result_free(res.data);
    if (dead || rc < 0)
        _exit(0);
}

static void wk_end(kg_gate_session *s, const wk_end_msg *m, const kg_gate_env *env)
{
    wk_ended_head h = { 0 };
    char msg[2048] = "";
    if (s->g == m->g) {
        h.rc = kg_session_end(s, env, m->complete ? 0 : KG_EPARTIAL);
        if (h.rc == KG_EPARTIAL)
            h.rc = 0;
        if (h.rc < 0)
            snprintf(msg, sizeof msg, "%s", kg_error_last());
        h.begin_s = s->begin_s;
        h.end_s = s->end_s;
    }
    fflush(stdout);
    (void)wk_send(wk_res_fd, WK_ENDED, &h, sizeof h, msg, strlen(msg) + 1);
}

/* The worker's life: probe the device (the parent never does), then serve requests. */
static void wk_main(kg_run *run, int cmd_fd)
{
    kg_gate_session s = { .g = NULL };
    char msg[1024] = "";
    wk_cmd_fd = cmd_fd;
    (void)pthread_atfork(NULL, NULL, wk_atfork_child);
    int rc = kg_device_open(&run->dev, run->opts.device);
    if (rc < 0)
        snprintf(msg, sizeof msg, "%s", kg_error_last());
    run->env.dev = rc == 0 ? &run->dev : NULL;
    run->env.in_worker = true;
    kg_report_forward_extras(wk_forward_extra);
    char hello[sizeof rc + sizeof run->dev];
    memcpy(hello, &rc, sizeof rc);
    memcpy(hello + sizeof rc, &run->dev, sizeof run->dev);
    (void)wk_send(wk_res_fd, WK_DEVICE, hello, sizeof hello, msg, strlen(msg) + 1);
    for (;;) {
        uint32_t h[2];
        char payload[64];
        if (wk_read_all(cmd_fd, h, sizeof h) < 0 || h[1] > sizeof payload ||
            wk_read_all(cmd_fd, payload, h[1]) < 0)
            _exit(0); /* the parent is gone */
        if (h[0] == WK_RUN)
            wk_run_one(&s, (const wk_run_msg *)payload, &run->env);
        else if (h[0] == WK_END)
            wk_end(&s, (const wk_end_msg *)payload, &run->env);
        else
            _exit(0);
    }
}

/* ---- the parent -------------------------------------------------------------------------- */

static void wk_tail_add(struct kg_worker *w, const char *p, size_t n)
{
    if (n >= KG_WK_TAIL) {
        memcpy(w->tail, p + n - KG_WK_TAIL, KG_WK_TAIL);
        w->tail_len = KG_WK_TAIL;
        return;
    }
    if (w->tail_len + n > KG_WK_TAIL) {
        size_t drop = w->tail_len + n - KG_WK_TAIL;
        memmove(w->tail, w->tail + drop, w->tail_len - drop);
        w->tail_len -= drop;
    }
    memcpy(w->tail + w->tail_len, p, n);
    w->tail_len += n;
}

/* Relay what the worker printed (stdout to stdout, stderr to stderr; a pool's worker into its
 * captures), keeping a tail. */
void kg_wk_relay(struct kg_worker *w, int fd)
{
    char buf[8192];
    FILE *to = fd == w->err_fd ? stderr : stdout;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r <= 0)
            return;
        kg_sbuf *cap = fd == w->err_fd ? w->capture_err : w->capture;
        if (cap) {
            kg_sbuf_putn(cap, buf, (size_t)r);
        } else {
            kg_progress_clear(); /* a progress line never stays under what the worker printed */
            fwrite(buf, 1, (size_t)r, to);
        }
        wk_tail_add(w, buf, (size_t)r);
    }
}

static void wk_drain(struct kg_worker *w)
{
    kg_wk_relay(w, w->out_fd);
    kg_wk_relay(w, w->err_fd);
    fflush(stdout);
    fflush(stderr);
}

static void wk_close(struct kg_worker *w)
{
    close(w->cmd_fd);
    close(w->res_fd);
    close(w->out_fd);
    close(w->err_fd);
}

bool kg_wk_dead(struct kg_worker *w)
{
    int st;
    if (!w->reaped && waitpid(w->pid, &st, WNOHANG) == w->pid) {
        w->reaped = true;
        w->status = st;
    }
    return w->reaped;
}

bool kg_wk_res_ready(const struct kg_worker *w)
{
    struct pollfd p = { w->res_fd, POLLIN, 0 };
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

#define WK_POLL_MS 50 /* how often a silent worker's pid is checked */

/* Wait for the worker's next message within `timeout_s`, relaying its output. 1: a message
 * is ready; 0: timeout; -1: the worker is gone (EOF, or its pid ended while some process it
 * forked still holds the pipe) or the run was interrupted. */
static int wk_wait(struct kg_worker *w, double timeout_s)
{
    double t0 = kg_now_s();
    for (;;) {
        struct pollfd p[3] = { { w->res_fd, POLLIN, 0 },
                               { w->out_fd, POLLIN, 0 },
                               { w->err_fd, POLLIN, 0 } };
        double left = timeout_s - (kg_now_s() - t0);
        if (left <= 0)
            return 0;
        int ms = left * 1000 > WK_POLL_MS ? WK_POLL_MS : (int)(left * 1000) + 1;
        int n = poll(p, 3, ms);
        if (wk_interrupted)
            return -1;
        kg_progress_tick(); /* a long case's progress line, on a terminal */
        if (n < 0 && errno == EINTR)
            continue;
        if (p[1].revents)
            kg_wk_relay(w, w->out_fd);
        if (p[2].revents)
            kg_wk_relay(w, w->err_fd);
        if (p[0].revents & POLLIN)
            return 1;
        if (p[0].revents & (POLLHUP | POLLERR))
            return -1;
        if (kg_wk_dead(w)) /* what it wrote before it ended is still read */
            return kg_wk_res_ready(w) ? 1 : -1;
    }
}

/* The parent's side: the result pipe is non-blocking, so a message cut off by the worker's
 * death is an error, not a read that blocks while a forked helper holds the pipe open. */
static int wk_read_res(struct kg_worker *w, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(w->res_fd, c, n);
        if (r > 0) {
            c += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR) || wk_interrupted)
            return -1;
        if (wk_wait(w, WK_DEFAULT_TIMEOUT_S) != 1)
            return -1;
    }
    return 0;
}

static void wk_close(struct kg_worker *w);

/* In a fresh worker: the parent's ends of the other workers' pipes (--devices) are not its. */
static void wk_close_others(kg_run *run)
{
    if (run->worker)
        wk_close(run->worker);
    for (size_t i = 0; i < KG_ARRAY_LEN(run->lanes); i++)
        if (run->lanes[i])
            wk_close(run->lanes[i]);
}

static int wk_fork(kg_run *run, int lane, struct kg_worker **out)
{
    int c[2], r[2], o[2], e[2];
    struct kg_worker *w = calloc(1, sizeof *w);
    if (!w)
        return KG_ERR(KG_ENOMEM, "out of memory starting the worker");
    /* O_CLOEXEC: a program a case execs must not hold the pipes (wk_atfork_child). */
    if (pipe2(c, O_CLOEXEC) < 0 || pipe2(r, O_CLOEXEC) < 0 || pipe2(o, O_CLOEXEC) < 0 ||
        pipe2(e, O_CLOEXEC) < 0) {
        free(w);
        return KG_ERR(KG_EIO, "cannot create the worker's pipes: %s", strerror(errno));
    }
    fflush(stdout);
    fflush(stderr);
    kg_env_hide_initial(); /* case code may read /proc/$PPID/environ */
    kg_reap_init();        /* what case code leaves outside the group comes back to us */
    pid_t pid = fork();
    if (pid < 0) {
        free(w);
        return KG_ERR(KG_EIO, "cannot fork the worker: %s", strerror(errno));
    }
    if (pid == 0) {
        /* The parent's record of this worker is the parent's: freed here, so that a leak
         * checker run by a case's exit() (an ASan build) cannot change that exit's status. */
        free(w);
        /* Its own process group: what case code forks ends with the worker (wk_reap). */
        (void)setpgid(0, 0);
        kg_reap_child_setup(); /* what case code forks stays under the worker (core/reap.c) */
        /* Least privilege: case code never sees the key that signs reports or a token. */
        kg_env_scrub_self();
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        dup2(o[1], STDOUT_FILENO);
        dup2(e[1], STDERR_FILENO);
        close(c[1]), close(r[0]), close(o[0]), close(o[1]), close(e[0]), close(e[1]);
        wk_res_fd = r[1];
        wk_close_others(run); /* a lane's worker never holds another's pipes */
        kg_phase_slot(lane);
        if (lane > 0 && (size_t)lane < run->opts.n_devices)
            run->opts.device = run->env.device = run->opts.devices[lane];
        wk_main(run, c[0]);
        _exit(0);
    }
    (void)setpgid(pid, pid); /* both sides, so no kill below can miss the group */
    kg_reap_track(pid);
    close(c[0]), close(r[1]), close(o[1]), close(e[1]);
    fcntl(o[0], F_SETFL, O_NONBLOCK);
    fcntl(e[0], F_SETFL, O_NONBLOCK);
    fcntl(r[0], F_SETFL, O_NONBLOCK);
    *w = (struct kg_worker){ .pid = pid,
                             .cmd_fd = c[1],
                             .res_fd = r[0],
                             .out_fd = o[0],
                             .err_fd = e[0],
                             .lane = lane };
    *out = w;
    run->isolated = true;
    return 0;
}

/* The worker's status once it is gone (killed first if it is still there). Processes that
 * case code forked in it (its process group) end with it. */
static int wk_reap(struct kg_worker *w, bool kill_it)
{
    int st = 0;
    if (!w->reaped) {
        if (kill_it)
            (void)kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
            ;
        w->reaped = true;
        w->status = st;
    }
    (void)kill(-w->pid, SIGKILL);
    kg_reap_untrack(w->pid);
    (void)kg_reap_orphans("worker"); /* what case code moved out of the group (setsid) */
    wk_drain(w);
    return w->status;
}

static int wk_read_msg(struct kg_worker *w, uint32_t *type, char **payload, uint32_t *len)
{
    uint32_t h[2];
    *payload = NULL;
    if (wk_read_res(w, h, sizeof h) < 0 || h[1] > (64u << 20))
        return -1;
    if (!(*payload = malloc(h[1] + 1)) || wk_read_res(w, *payload, h[1]) < 0) {
        free(*payload);
        *payload = NULL;
        return -1;
    }
    (*payload)[h[1]] = '\0';
    *type = h[0];
    *len = h[1];
    return 0;
}

/* A fresh worker's first message: the device probe's code, the device and the probe's message.
 * *drc < 0 is the probe's error (KG_ENODEV: no GPU), with its message set. */
static int wk_hello(struct kg_worker *w, int *drc, kg_device_info *dev)
{
    int rc = 0;
    uint32_t type, len;
    char *p = NULL;
    if (wk_wait(w, 120) != 1 || wk_read_msg(w, &type, &p, &len) < 0 || type != WK_DEVICE ||
        len <= sizeof *drc + sizeof *dev) {
        rc = KG_ERR(KG_EINTERNAL, "the worker did not report the device");
        goto cleanup;
    }
    memcpy(drc, p, sizeof *drc);
    memcpy(dev, p + sizeof *drc, sizeof *dev);
    if (*drc < 0)
        (void)KG_ERR(*drc, "%s", p + sizeof *drc + sizeof *dev);
cleanup:
    free(p);
    return rc;
}

int kg_wk_spawn(kg_run *run, int lane, struct kg_worker **out, int *drc, kg_device_info *dev)
{
    int rc = 0;
    KG_TRY(wk_fork(run, lane, out));
    rc = wk_hello(*out, drc, dev);
    if (rc < 0)
        kg_wk_kill(out); /* it never said hello: it may be stuck opening the device */
cleanup:
    return rc;
}

int kg_worker_start(kg_run *run)
{
    int rc = 0, drc = 0;
    const char *iso = getenv("KGATE_ISOLATION");
    if (iso && strcmp(iso, "0") == 0)
        return 1; /* in-process, by request */
    kg_interrupt_catch();
    signal(SIGPIPE, SIG_IGN);
    KG_TRY(kg_phase_share());
    KG_TRY(kg_wk_spawn(run, 0, &run->worker, &drc, &run->dev));
    rc = drc;
cleanup:
    return rc;
}

void kg_wk_stop(struct kg_worker **slot)
{
    struct kg_worker *w = *slot;
    if (!w)
        return;
    (void)wk_send(w->cmd_fd, WK_QUIT, NULL, 0, NULL, 0);
    close(w->cmd_fd);
    w->cmd_fd = -1;
    (void)wk_reap(w, false);
    close(w->res_fd), close(w->out_fd), close(w->err_fd);
    free(w);
    *slot = NULL;
}

void kg_wk_kill(struct kg_worker **slot)
{
    struct kg_worker *w = *slot;
    if (!w)
        return;
    (void)wk_reap(w, true);
    wk_close(w);
    free(w);
    *slot = NULL;
}

void kg_worker_stop(kg_run *run)
{
    kg_wk_stop(&run->worker);
    for (size_t i = 0; i < KG_ARRAY_LEN(run->lanes); i++)
        kg_wk_stop(&run->lanes[i]);
}

/* ---- one gate through the worker --------------------------------------------------------- */

static const char *wk_signame(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
    }
}

/* The last lines the worker printed, as a JSON array (at most 12). */
static cJSON *wk_tail_json(const struct kg_worker *w)
{
    cJSON *a = cJSON_CreateArray();
    const char *end = w->tail + w->tail_len, *p = end;
    int lines = 0;
    while (p > w->tail && lines < 13)
        if (*--p == '\n')
            lines++;
    if (p > w->tail || *p == '\n')
        p++;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = strndup(p, n);
        if (line && n)
            cJSON_AddItemToArray(a, cJSON_CreateString(line));
        free(line);
        p += n + 1;
    }
    return a;
}

/* figures.fault of a faulted case, and its message. */
static cJSON *wk_fault_figures(const struct kg_worker *w, const kg_wk_fault *f, cJSON *fig,
                               kg_case_result *res, const struct kg_gate *g)
{
    char gate[512], id[512], phase[512];
    kg_phase_get(gate, id, phase, sizeof gate);
    if (!fig)
        fig = cJSON_CreateObject();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, KG_FIG_FAULT_CLASS, f->cls);
    if (f->sig)
        cJSON_AddStringToObject(o, KG_FIG_FAULT_SIGNAL, wk_signame(f->sig));
    if (strcmp(f->cls, "exit") == 0)
        cJSON_AddNumberToObject(o, KG_FIG_FAULT_EXIT_STATUS, f->status);
    if (f->cuda_error)
        cJSON_AddStringToObject(o, KG_FIG_FAULT_CUDA_ERROR, f->cuda_error);
    if (f->timeout_s > 0)
        cJSON_AddNumberToObject(o, KG_FIG_FAULT_TIMEOUT, f->timeout_s);
    cJSON_AddStringToObject(o, KG_FIG_FAULT_GATE, g->name);
    cJSON_AddStringToObject(o, KG_FIG_FAULT_PHASE, phase);
    cJSON_AddItemToObject(o, KG_FIG_FAULT_OUTPUT, wk_tail_json(w));
    cJSON_DeleteItemFromObject(fig, KG_FIG_FAULT);
    cJSON_AddItemToObject(fig, KG_FIG_FAULT, o);
    char what[160];
    if (strcmp(f->cls, "signal") == 0)
        snprintf(what, sizeof what, "killed by %s", wk_signame(f->sig));
    else if (strcmp(f->cls, "exit") == 0)
        snprintf(what, sizeof what, "the process called exit(%d)", f->status);
    else if (strcmp(f->cls, "timeout") == 0)
        snprintf(what, sizeof what, "no result within %.0f s (killed)", f->timeout_s);
    else if (strcmp(f->cls, "interrupted") == 0)
        snprintf(what, sizeof what, "the run was interrupted by %s", wk_signame(f->sig));
    else
        snprintf(what, sizeof what, "%s (the CUDA context is lost)", f->cuda_error);
    char prior[1024], evidence[256];
    snprintf(prior, sizeof prior, "%s", res->message);
    /* What the gate had already observed (a forbidden call) is the verdict; the fault that
     * followed is its detail. */
    bool seen = kg_phase_evidence_get(evidence, sizeof evidence);
    if (seen)
        cJSON_AddStringToObject(o, KG_FIG_FAULT_EVIDENCE, evidence);
    snprintf(res->message, sizeof res->message, "%s%.200s%sFAULT %s: %s in %s (%.60s)%s%.400s",
             seen ? "observed before the fault: " : "", seen ? evidence : "", seen ? "; then " : "",
             f->cls, what, g->name, phase, prior[0] ? ": " : "", prior);
    res->verdict = seen ? KG_VERDICT_FAIL : KG_VERDICT_ERROR;
    return fig;
}

/* A ROW message into res, fig (data copied). */
static int wk_take_row(const char *p, uint32_t len, const struct kg_gate *g, kg_case_result *res,
                       cJSON **fig, wk_row_head *h)
{
    if (len < sizeof *h)
        return KG_ERR(KG_EINTERNAL, "worker: short result");
    memcpy(h, p, sizeof *h);
    if (sizeof *h + (size_t)h->msg_len + h->fig_len + h->data_len != len ||
        h->msg_len >= sizeof res->message || (h->data_len && h->data_len != g->result_size))
        return KG_ERR(KG_EINTERNAL, "worker: malformed result");
    p += sizeof *h;
    *res = (kg_case_result){ .verdict = (kg_verdict)h->verdict };
    memcpy(res->message, p, h->msg_len);
    p += h->msg_len;
    *fig = h->fig_len ? cJSON_ParseWithLength(p, h->fig_len) : NULL;
    p += h->fig_len;
    if (h->data_len) {
        if (!(res->data = malloc(h->data_len)))
            return KG_ERR(KG_ENOMEM, "out of memory for a result");
        memcpy(res->data, p, h->data_len);
    }
    return 0;
}

/* A report extra a gate set in the worker ({key NUL value}): into the report. `merged`
 * (--devices, while the lanes end gate g): the extras earlier lanes' ends set, into which a
 * later lane's is merged (g->merge_extra); NULL otherwise. */
static void wk_extra(kg_run *run, const struct kg_gate *g, cJSON *merged, const char *p,
                     uint32_t len)
{
    size_t kl = strnlen(p, len);
    cJSON *v = kl < len ? cJSON_Parse(p + kl + 1) : NULL;
    cJSON *had = merged && v ? cJSON_GetObjectItemCaseSensitive(merged, p) : NULL;
    if (had && g->merge_extra) {
        g->merge_extra(p, had, v);
        cJSON_Delete(v);
        v = cJSON_Duplicate(had, true);
    } else if (merged && v) {
        cJSON_DeleteItemFromObjectCaseSensitive(merged, p);
        cJSON_AddItemToObject(merged, p, cJSON_Duplicate(v, true));
    }
    kg_report_set_extra(run->rep, p, v);
}

/* The line of a case whose worker was lost (it printed none of its own). */
void kg_wk_print_lost(const kg_run *run, const struct kg_gate *g, const kg_case_desc *d,
                      const char *message)
{
    kg_progress_clear();
    if (!run->env.quiet)
        printf("%*s %s%-7s%s %s\n", g->n_columns ? g->columns[0].width : -46, d->id,
               kg_color_begin("ERROR"), "ERROR", kg_color_end("ERROR"), message);
}

int kg_wk_take(kg_run *run, struct kg_worker *w, const struct kg_gate *g, kg_case_result *res,
               cJSON **fig, kg_wk_fault *f, bool *gone)
{
    uint32_t type, len;
    char *p = NULL;
    int rc = 0;
    if (wk_read_msg(w, &type, &p, &len) < 0) {
        *gone = true;
        return 0;
    }
    if (!w->capture)
        wk_drain(w);
    if (type == WK_EXTRA) {
        wk_extra(run, g, NULL, p, len);
    } else if (type == WK_BEGIN_FAIL) {
        int brc;
        memcpy(&brc, p, sizeof brc);
        rc = KG_ERR(brc, "%s", p + sizeof brc);
    } else if (type == WK_ROW) {
        wk_row_head h;
        rc = wk_take_row(p, len, g, res, fig, &h);
        if (rc == 0 && h.last && !h.fault_class[0])
            f->retire = true; /* its own error (out of memory): it exits after this row */
        if (rc == 0 && h.fault_class[0]) {
            static char err[KG_DEVICES_MAX][64]; /* outlives the message: f points at it */
            snprintf(err[w->lane], sizeof err[w->lane], "%s", h.cuda_error);
            *f = (kg_wk_fault){ .cls = "cuda", .cuda_error = err[w->lane] };
        }
        rc = rc < 0 ? rc : 1;
    }
    free(p);
    return rc;
}

/* Messages until the ROW of the case (extras applied on the way). rc < 0: stop the run;
 * *gone: the worker died or hung (f filled). */
static int wk_result(kg_run *run, const struct kg_gate *g, double timeout_s, kg_case_result *res,
                     cJSON **fig, kg_wk_fault *f, bool *gone)
{
    struct kg_worker *w = run->worker;
    for (;;) {
        int ready = wk_wait(w, timeout_s);
        if (wk_interrupted) {
            *f = (kg_wk_fault){ .cls = "interrupted", .sig = wk_interrupted };
            *gone = true;
            return 0;
        }
        if (ready == 0) {
            *f = (kg_wk_fault){ .cls = "timeout", .timeout_s = timeout_s };
            *gone = true;
            return 0;
        }
        if (ready < 0) {
            *gone = true;
            return 0;
        }
        int rc = kg_wk_take(run, w, g, res, fig, f, gone);
        if (rc != 0 || *gone)
            return rc;
    }
}

/* The watchdog's limit for one case: --case-timeout, else the case's own timeout_s, else the
 * gate's (bench: from its budget), else 120 s. */
double kg_wk_timeout(const kg_run *run, const struct kg_gate *g, const void *opts,
                     const kg_case_desc *d)
{
    double t = kg_case_timeout_s(d, run->opts.case_timeout_s);
    if (t > 0)
        return t;
    return g->case_timeout_s ? g->case_timeout_s(opts ? opts : g->opts_init) : WK_DEFAULT_TIMEOUT_S;
}

void kg_wk_lost(struct kg_worker **slot, const struct kg_gate *g, kg_wk_fault *f, bool gone,
                kg_case_result *res, cJSON **fig)
{
    struct kg_worker *w = *slot;
    bool hung = gone && f->cls && strcmp(f->cls, "cuda") != 0;
    int st = wk_reap(w, hung || wk_interrupted);
    if (!f->cls) {
        if (WIFSIGNALED(st))
            *f = (kg_wk_fault){ .cls = "signal", .sig = WTERMSIG(st) };
        else
            *f = (kg_wk_fault){ .cls = "exit", .status = WIFEXITED(st) ? WEXITSTATUS(st) : -1 };
    }
    kg_phase_slot(w->lane); /* the phase it was in, from its own page */
    *fig = wk_fault_figures(w, f, *fig, res, g);
    kg_phase_slot(0);
    wk_close(w);
    free(w);
    *slot = NULL;
}

/* One case through the worker: its row, or its fault. */
static int wk_case(kg_run *run, const struct kg_gate *g, const void *opts, const kg_case_desc *d)
{
    double timeout_s = kg_wk_timeout(run, g, opts, d);
    int rc = 0, drc = 0;
    kg_case_result res = { .verdict = KG_VERDICT_ERROR };
    cJSON *fig = NULL;
    kg_wk_fault f = { .cls = NULL };
    bool gone = false;
    kg_device_info dev;
    if (!run->worker) /* the same device as the first worker's */
        KG_TRY(kg_wk_spawn(run, 0, &run->worker, &drc, &dev));
    struct kg_worker *w = run->worker;
    if (w->gate != g) {
        w->gate = g;
        w->gate_cases = 0;
    }
    bool header = !run->header_done;
    run->header_done = true;
    if (kg_wk_send_run(w, g, opts, d, header) < 0)
        gone = true;
    else
        KG_TRY(wk_result(run, g, timeout_s, &res, &fig, &f, &gone));
    if (f.retire && !gone) {
        kg_wk_stop(&run->worker); /* the next case starts a fresh one */
    } else if (gone || f.cls) {   /* died, hung, or a dead context (it exits after its row) */
        kg_wk_lost(&run->worker, g, &f, gone, &res, &fig);
        kg_progress_clear();
        if (gone)
            kg_wk_print_lost(run, g, d, res.message);
    } else {
        w->gate_cases++;
    }
    fflush(stdout);
    rc = kg_run_record(run, g, d, &res, fig);
cleanup:
    return rc;
}

int kg_wk_send_run(struct kg_worker *w, const struct kg_gate *g, const void *opts,
                   const kg_case_desc *d, bool header)
{
    wk_run_msg m = { .g = g, .opts = opts, .d = d, .header = header };
    return wk_send(w->cmd_fd, WK_RUN, &m, sizeof m, NULL, 0);
}

int kg_wk_end_gate(kg_run *run, struct kg_worker **slot, const struct kg_gate *g, bool complete,
                   cJSON *merged, double *begin_s, double *end_s)
{
    struct kg_worker *w = *slot;
    wk_end_msg m = { .g = g, .complete = complete };
    *begin_s = *end_s = 0;
    if (!w || w->gate != g)
        return 0; /* no worker has this gate begun (the last one faulted) */
    w->gate = NULL;
    if (wk_send(w->cmd_fd, WK_END, &m, sizeof m, NULL, 0) < 0)
        return 0;
    for (;;) {
        uint32_t type, len;
        char *p = NULL;
        if (wk_wait(w, WK_DEFAULT_TIMEOUT_S) != 1 || wk_read_msg(w, &type, &p, &len) < 0) {
            kg_wk_kill(slot);
            return 0;
        }
        wk_drain(w);
        int rc = 0;
        if (type == WK_EXTRA) {
            wk_extra(run, g, merged, p, len);
        } else if (type == WK_ENDED) {
            wk_ended_head h = { .rc = KG_EINTERNAL };
            if (len > sizeof h)
                memcpy(&h, p, sizeof h);
            *begin_s = h.begin_s;
            *end_s = h.end_s;
            rc = h.rc < 0 ? KG_ERR(h.rc, "%s",
                                   len > sizeof h ? p + sizeof h : "worker: a short ENDED message")
                          : 0;
            free(p);
            return rc;
        }
        free(p);
    }
}

int kg_worker_gate(kg_run *run, const kg_registry *reg, const struct kg_gate *g, const void *opts)
{
    int rc = 0;
    double b = 0, e = 0;
    run->header_done = false;
    for (size_t i = 0; i < run->sel.n; i++) {
        const kg_case_desc *d = kg_registry_get(reg, run->sel.idx[i]);
        bool before = wk_interrupted; /* between gates: no case is started to pin it on */
        if (!run->env.quiet)
            kg_progress_begin("%s %zu/%zu %s", g->name, i + 1, run->sel.n, d->id);
        if (!before)
            rc = wk_case(run, g, opts, d);
        kg_progress_end();
        KG_TRY(rc);
        if (wk_interrupted) {
            rc = kg_run_stopped(run, "%s, %s case %zu of %zu (%s)", g->name,
                                before ? "before" : "in", i + 1, run->sel.n, d->id);
            goto cleanup;
        }
    }
    bool complete = run->worker && run->worker->gate == g && run->worker->gate_cases == run->sel.n;
    rc = kg_wk_end_gate(run, &run->worker, g, complete, NULL, &b, &e);
    kg_run_part_gate(run, b, e);
cleanup:
    return rc;
}
