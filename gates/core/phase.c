/* Where this process is: gate, case, phase, and the first evidence a gate observed in that
 * case. The isolation worker writes it into a page it shares with its parent (MAP_SHARED
 * before fork), so a worker killed by a signal, an exit() or the watchdog still tells the
 * parent what it was doing and what it had already seen (e.g. a forbidden call the hotpath's
 * CUPTI watch recorded before the launcher exited). */
#include <string.h>
#include <sys/mman.h>
#include "core/kg_core.h"

typedef struct {
    char gate[64], case_id[512], phase[64];
    char evidence[256]; /* "" = none; first one wins, cleared when a case starts */
    /* The case's wall seconds per kind of phase so far, and the kind (and since when) the
     * clock is charging now: -1 = none (the case ended). CLOCK_MONOTONIC is the same clock in
     * the parent, so it can close the account of a worker that died mid-phase. */
    double phase_s[KG_PHASE_N];
    double since_s;
    int kind;
} kg_phase_page;

static kg_phase_page ph_local = { .kind = -1 };
static kg_phase_page *ph = &ph_local;
/* The shared pages, one per worker slot (--devices: one worker per GPU at once). */
static kg_phase_page *ph_pages;

int kg_phase_share(void)
{
    if (ph_pages)
        return 0;
    size_t n = KG_PHASE_SLOTS * sizeof *ph;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return KG_ERR(KG_EIO, "cannot map the shared phase pages");
    ph_pages = p;
    memset(ph_pages, 0, n);
    for (int i = 0; i < KG_PHASE_SLOTS; i++)
        ph_pages[i].kind = -1;
    ph = ph_pages;
    return 0;
}

void kg_phase_slot(int slot)
{
    if (ph_pages && slot >= 0 && slot < KG_PHASE_SLOTS)
        ph = &ph_pages[slot];
}

static void ph_copy(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < n; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

static const char *const ph_kind_names[KG_PHASE_N] = {
    [KG_PHASE_SETUP] = "setup",         [KG_PHASE_PREPARE] = "prepare",
    [KG_PHASE_REFERENCE] = "reference", [KG_PHASE_WORK] = "work",
    [KG_PHASE_TEARDOWN] = "teardown",
};

const char *kg_phase_kind_name(int kind)
{
    return kind >= 0 && kind < KG_PHASE_N ? ph_kind_names[kind] : "?";
}

/* Case code's phases by name; everything else is the gate's own work (launch, capture,
 * timing, run_case, ...). */
static int ph_kind(const char *phase)
{
    for (int k = 0; k < KG_PHASE_N; k++)
        if (k != KG_PHASE_WORK && phase && strcmp(phase, ph_kind_names[k]) == 0)
            return k;
    return KG_PHASE_WORK;
}

/* Charge the time since the current kind began to it; `next` charges from now on. */
static void ph_charge(int next)
{
    double now = kg_now_s();
    if (ph->kind >= 0 && ph->kind < KG_PHASE_N && now > ph->since_s)
        ph->phase_s[ph->kind] += now - ph->since_s;
    ph->kind = next;
    ph->since_s = now;
}

void kg_phase_set(const char *gate, const char *case_id, const char *phase)
{
    if (gate || case_id) { /* a case starts (session.c): evidence and times start empty */
        ph->evidence[0] = '\0';
        memset(ph->phase_s, 0, sizeof ph->phase_s);
        ph->kind = -1;
    }
    ph_charge(ph_kind(phase));
    if (gate)
        ph_copy(ph->gate, sizeof ph->gate, gate);
    if (case_id)
        ph_copy(ph->case_id, sizeof ph->case_id, case_id);
    ph_copy(ph->phase, sizeof ph->phase, phase);
}

void kg_phase_get(char *gate, char *case_id, char *phase, size_t n)
{
    ph_copy(gate, n, ph->gate);
    ph_copy(case_id, n, ph->case_id);
    ph_copy(phase, n, ph->phase);
}

bool kg_phase_is_case(const char *case_id) { return strcmp(ph->case_id, case_id) == 0; }

void kg_phase_evidence_set(const char *text)
{
    if (!text || !text[0] || ph->evidence[0])
        return;
    ph_copy(ph->evidence, sizeof ph->evidence, text);
}

bool kg_phase_evidence_get(char *buf, size_t n)
{
    if (n)
        ph_copy(buf, n, ph->evidence);
    return ph->evidence[0] != '\0';
}

void kg_phase_case_end(void) { ph_charge(-1); }

bool kg_phase_times(const char *gate, const char *case_id, double out[KG_PHASE_N])
{
    double now = kg_now_s();
    if (!gate || !case_id || strncmp(ph->gate, gate, sizeof ph->gate - 1) != 0 ||
        strcmp(ph->case_id, case_id) != 0) {
        memset(out, 0, KG_PHASE_N * sizeof out[0]);
        return false;
    }
    memcpy(out, ph->phase_s, KG_PHASE_N * sizeof out[0]);
    /* A worker that died mid-phase: the phase ran until now, as far as the run is concerned. */
    if (ph->kind >= 0 && ph->kind < KG_PHASE_N && now > ph->since_s)
        out[ph->kind] += now - ph->since_s;
    return true;
}
