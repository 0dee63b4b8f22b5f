/* `kgate report --merge OUT SHARD.json...`: the reports of one run's shards
 * (`--shard I/N`, gates/core/shard.c) into one report, equal verdict for verdict to the
 * unsharded run. The command is runners/cli/shard.c. */
#ifndef KG_REPORT_MERGE_H
#define KG_REPORT_MERGE_H

#include "core/kg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Merge n loaded shard reports (names: their files, for messages). Refused (KG_EREFUSED, exit
 * 2, naming the file and the rule): a report that is not a shard or is incomplete; with `key`,
 * a production shard that is unsigned or mis-signed (any shard's signature is checked when it
 * carries one); shards whose command, mode, seed, commit under test, GPU class, gates, marks
 * source, N, selection or assignment differ from the first's; two files of one shard index or
 * one (gate, case) in two shards (overlapping); an index of 1..N no file holds (missing); a
 * row whose case is not its shard's. The merged report: the first shard's context, started_at
 * the earliest, run_id "merged-" + the SHA-256 prefix of the shards' run ids (merging the same
 * shards twice gives the same run, which the marks' replay rule then refuses to apply twice),
 * every shard's rows (per gate, by shard), the selftest rows once per case with the worst
 * verdict of the shards, shard {merged, count, selection, cases, parts}, the summary and
 * *counts (KG_VERDICT_N) recomputed from the merged rows, signed last with `key` (production). */
int kg_report_merge(cJSON **out, const cJSON *const *in, const char *const *names, size_t n,
                    const char *key, int counts[KG_VERDICT_N]);

#ifdef __cplusplus
}
#endif
#endif
