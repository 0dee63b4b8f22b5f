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
    char evidence[256];   /* "" = none; first one wins, cleared when a case starts */
} kg_phase_page;

static kg_phase_page ph_local;
static kg_phase_page *ph = &ph_local;

int kg_phase_share(void)
{
    if (ph != &ph_local)
        return 0;
    void *p = mmap(NULL, sizeof *ph, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return KG_ERR(KG_EIO, "cannot map the shared phase page");
    ph = p;
    memset(ph, 0, sizeof *ph);
    return 0;
}

static void ph_copy(char *dst, size_t n, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < n; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

void kg_phase_set(const char *gate, const char *case_id, const char *phase)
{
    if (gate || case_id) /* a case starts (session.c): its evidence starts empty */
        ph->evidence[0] = '\0';
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
