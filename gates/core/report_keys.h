/* Every key of the JSON report (schema "kgate-report/1"), defined once: the writers (core
 * report, the gates, run, selftest, ab) and the readers (exporters, status, marks advance) use
 * these names, and baselines/report.schema.json documents each of them
 * (tests/test_report_schema.sh checks both directions: a key macro here is in the schema and a
 * property of the schema is a key macro here).
 *
 * Naming: KG_RK_* top level (and the run-level objects under it), KG_RES_* the fields of one
 * result, KG_FIG_* the bench gate's figures, KG_FIG_PARITY_* / KG_FIG_PF_* / KG_FIG_HP_* /
 * KG_FIG_AB_* the figures of parity, preflight, hotpath and ab. A spelling may recur in another
 * object ("name", "mode"): each object's keys are listed with it. KG_RV_* and KG_BENCH_GATE are
 * values, not keys. Only add keys here: renaming one breaks every recorded report. */
#ifndef KG_REPORT_KEYS_H
#define KG_REPORT_KEYS_H

/* ---- values -------------------------------------------------------------------------------- */

#define KG_RV_SCHEMA "kgate-report/1"
/* results[].verdict (and the summary's keys); XFAIL/XPASS: a case's declared expected failure
 * (kg_case_desc.xfail_gate) still failing / now passing */
#define KG_RV_VERDICT_PASS "PASS"
#define KG_RV_VERDICT_WARN "WARN"
#define KG_RV_VERDICT_FAIL "FAIL"
#define KG_RV_VERDICT_SKIP "SKIP"
#define KG_RV_VERDICT_ERROR "ERROR"
#define KG_RV_VERDICT_XFAIL "XFAIL"
#define KG_RV_VERDICT_XPASS "XPASS"
#define KG_RV_MODE_PRODUCTION "production"
#define KG_RV_MODE_DIAGNOSTIC "diagnostic"
#define KG_RV_GATE_PARITY "parity"
#define KG_RV_GATE_PREFLIGHT "preflight"
#define KG_RV_GATE_HOTPATH "hotpath"
#define KG_BENCH_GATE "bench"
#define KG_RV_GATE_BENCH KG_BENCH_GATE
#define KG_RV_GATE_SELFTEST "selftest"
#define KG_RV_GATE_AB "ab"
#define KG_RV_GATE_COUNTERS "counters"
/* figures.decision of the bench gate */
#define KG_RV_DEC_NO_MARK "NO_MARK"
#define KG_RV_DEC_SAME "SAME"
#define KG_RV_DEC_IMPROVED "IMPROVED"
#define KG_RV_DEC_REGRESSED "REGRESSED"
#define KG_RV_DEC_UNPROVEN "UNPROVEN"           /* mark from too few processes */
#define KG_RV_DEC_STATE_DIFFERS "STATE_DIFFERS" /* mark of another power state */
/* figures.decision of ab */
#define KG_RV_AB_SAME "SAME"
#define KG_RV_AB_B_FASTER "B_FASTER"
#define KG_RV_AB_B_SLOWER "B_SLOWER"
/* figures.bound and figures.direction of the bench gate */
#define KG_RV_BOUND_MEMORY "memory"
#define KG_RV_BOUND_COMPUTE "compute"
#define KG_RV_DIR_LOWER "lower_is_better"
#define KG_RV_DIR_HIGHER "higher_is_better"
/* signature.alg */
#define KG_RV_SIG_HMAC_SHA256 "hmac-sha256"

/* ---- top level ------------------------------------------------------------------------------ */

#define KG_RK_SCHEMA "schema" /* KG_RV_SCHEMA */
#define KG_RK_TOOL "tool"     /* {name, version, build} */
#define KG_RK_TOOL_NAME "name"
#define KG_RK_TOOL_VERSION "version"
#define KG_RK_TOOL_BUILD "build"      /* kg_build_id() */
#define KG_RK_COMMAND "command"       /* "run", "parity", ..., "selftest", "ab" */
#define KG_RK_MODE "mode"             /* "production" | "diagnostic" */
#define KG_RK_CERTIFYING "certifying" /* true only for `run --production` */
#define KG_RK_NOTICE "notice"         /* diagnostic reports only */
#define KG_RK_STARTED_AT "started_at" /* UTC, "YYYY-MM-DDTHH:MM:SSZ" */
#define KG_RK_RUN_ID "run_id"
#define KG_RK_SEED "seed"
#define KG_RK_NO_DEVICE "no_device" /* why there is no GPU (device is then null) */
#define KG_RK_SUMMARY "summary"     /* verdict name -> count */
#define KG_RK_RESULTS "results"     /* [{gate, case, verdict, message, figures}] */
/* production reports with KGATE_REPORT_KEY: last member, {alg, value} (core/sign.c) */
#define KG_RK_SIGNATURE "signature"
#define KG_RK_SIG_ALG "alg"     /* KG_RV_SIG_HMAC_SHA256 */
#define KG_RK_SIG_VALUE "value" /* HMAC-SHA256 of the canonical bytes, 64 hex digits */
/* `run` lists the gates it ran: each must cover every case */
#define KG_RK_GATES "gates"

/* provenance: the code under test and the CI run; the CI variables are copied verbatim. */
#define KG_RK_PROVENANCE "provenance" /* .commit: the code under test */
#define KG_RK_PROV_COMMIT "commit"    /* "unknown" when no variable names it */
#define KG_RK_PROV_BUILD_TYPE "build_type"
/* true: the commit is HEAD with uncommitted changes to tracked files */
#define KG_RK_PROV_LOCAL_CHANGES "local_changes"
#define KG_RK_PROV_KGATE_COMMIT "KGATE_COMMIT"
#define KG_RK_PROV_GITHUB_SHA "GITHUB_SHA"
#define KG_RK_PROV_GITHUB_REPOSITORY "GITHUB_REPOSITORY"
#define KG_RK_PROV_GITHUB_RUN_ID "GITHUB_RUN_ID"
#define KG_RK_PROV_GITHUB_RUN_ATTEMPT "GITHUB_RUN_ATTEMPT"
#define KG_RK_PROV_GITHUB_REF "GITHUB_REF"
#define KG_RK_PROV_GITHUB_WORKFLOW "GITHUB_WORKFLOW"
#define KG_RK_PROV_GITHUB_EVENT_NAME "GITHUB_EVENT_NAME"
#define KG_RK_PROV_RUNNER_NAME "RUNNER_NAME"
#define KG_RK_PROV_CI_COMMIT_SHA "CI_COMMIT_SHA"
#define KG_RK_PROV_CI_PROJECT_ID "CI_PROJECT_ID"
#define KG_RK_PROV_CI_PROJECT_PATH "CI_PROJECT_PATH"
#define KG_RK_PROV_CI_PIPELINE_ID "CI_PIPELINE_ID"
#define KG_RK_PROV_CI_JOB_ID "CI_JOB_ID"
#define KG_RK_PROV_CI_COMMIT_REF_NAME "CI_COMMIT_REF_NAME"
#define KG_RK_PROV_CI_RUNNER_DESCRIPTION "CI_RUNNER_DESCRIPTION"
#define KG_RK_PROV_KGATE_BUILD_TYPE "KGATE_BUILD_TYPE"
/* The variables in the order they are looked up (the first of the three commit variables set
 * gives provenance.commit). */
#define KG_RK_PROV_ENV_KEYS                                                               \
    KG_RK_PROV_KGATE_COMMIT, KG_RK_PROV_GITHUB_SHA, KG_RK_PROV_GITHUB_REPOSITORY,         \
        KG_RK_PROV_GITHUB_RUN_ID, KG_RK_PROV_GITHUB_RUN_ATTEMPT, KG_RK_PROV_GITHUB_REF,   \
        KG_RK_PROV_GITHUB_WORKFLOW, KG_RK_PROV_GITHUB_EVENT_NAME, KG_RK_PROV_RUNNER_NAME, \
        KG_RK_PROV_CI_COMMIT_SHA, KG_RK_PROV_CI_PROJECT_ID, KG_RK_PROV_CI_PROJECT_PATH,   \
        KG_RK_PROV_CI_PIPELINE_ID, KG_RK_PROV_CI_JOB_ID, KG_RK_PROV_CI_COMMIT_REF_NAME,   \
        KG_RK_PROV_CI_RUNNER_DESCRIPTION, KG_RK_PROV_KGATE_BUILD_TYPE

/* device (kg_device_to_json; null without a GPU) */
#define KG_RK_DEVICE "device"
#define KG_RK_DEVICES "devices" /* --devices: every GPU of the run, the first is "device" */
#define KG_RK_DEVICE_NAME "name"
#define KG_RK_DEVICE_UUID "uuid"
#define KG_RK_DEVICE_SERIAL "serial"         /* the board's serial (NVML); null when unavailable */
#define KG_RK_DEVICE_SERIAL_WHY "serial_why" /* why the serial is null */
#define KG_RK_DEVICE_CLASS "class"           /* report.device.class: the marks' device key */
#define KG_RK_DEVICE_CC "compute_capability"
#define KG_RK_DEVICE_ORDINAL "ordinal"
#define KG_RK_DEVICE_SM_COUNT "sm_count"
#define KG_RK_DEVICE_GLOBAL_MEM "global_mem_bytes"
#define KG_RK_DEVICE_L2 "l2_bytes"
#define KG_RK_DEVICE_SM_CLOCK_MAX "sm_clock_max_mhz"
#define KG_RK_DEVICE_MEM_CLOCK_MAX "mem_clock_max_mhz"
#define KG_RK_DRIVER "driver_cuda_version"
#define KG_RK_RUNTIME "runtime_version"

/* selftest (selftest and run): the matrix of defects x gates and its counts */
#define KG_RK_SELFTEST "selftest"
#define KG_RK_ST_MATRIX "matrix"
#define KG_RK_ST_CASE "case"
#define KG_RK_ST_EXPECT_GATE "expect_gate" /* "" for a clean case */
#define KG_RK_ST_OBSERVED "observed"       /* gate name -> verdict name or "-" (not run) */
/* caught, ESCAPED, not run, informational, FALSE ALARM, clean */
#define KG_RK_ST_OUTCOME "outcome"
#define KG_RK_ST_CAUGHT "caught"
#define KG_RK_ST_ESCAPED "escaped"
#define KG_RK_ST_FALSE_ALARMS "false_alarms"
#define KG_RK_ST_NOT_RUN "not_run"
#define KG_RK_ST_INFORMATIONAL "informational"
#define KG_RK_ST_PASSES "passes"           /* [{name, wall_s, cases}]: each child pass */
#define KG_RK_ST_PASS_NAME "name"          /* "<runner>/<gate>", e.g. "faults/parity" */
#define KG_RK_ST_PASS_WALL "wall_s"        /* the child's own wall time */
#define KG_RK_ST_PASS_CASES "cases"        /* its results */
#define KG_RK_ST_CERTIFICATE "certificate" /* reused: the certificate these rows come from */
/* selftest.certificate, and the certificate file (runners/cli/selftest_cert.c) */
#define KG_RK_CERT_CREATED_AT "created_at"
#define KG_RK_CERT_AGE "age_s"
#define KG_RK_CERT_BUILD "build"         /* the kgate build id (kg_build_id) */
#define KG_RK_CERT_CATALOGUE "catalogue" /* SHA-256 of the defect runner */
#define KG_RK_CERT_DRIVER "driver"
#define KG_RK_CERT_GPU_UUID "gpu_uuid"
#define KG_RK_CERT_SEED "seed"

/* preflight (the preflight gate's inputs) */
#define KG_RK_PREFLIGHT "preflight"
#define KG_RK_PF_ARCHS "archs" /* ["sm_90", ...]: the cubins in the binary */
#define KG_RK_PF_PATH "path"   /* "runtime" | "static" */
#define KG_RK_PF_BASELINE "baseline"
#define KG_RK_PF_ALLOWLIST "allowlist"

/* bench (the bench gate's settings, ceilings and NVML snapshots) */
#define KG_RK_BENCH "bench"
#define KG_RK_BENCH_SETTINGS "settings"
#define KG_RK_BS_MODE "mode" /* "warm" | "cold" */
#define KG_RK_BS_BUDGET "budget_s"
#define KG_RK_BS_MIN_SAMPLES "min_samples"
#define KG_RK_BS_MAX_SAMPLES "max_samples"
#define KG_RK_BS_TARGET_CI_REL "target_ci_rel"
#define KG_RK_BS_CI_LEVEL "ci_level"
#define KG_RK_BS_MIN_REPLAY_MS "min_replay_ms"
#define KG_RK_BS_MIN_CLOCK_FRAC "min_clock_frac"
#define KG_RK_BS_BAND_FLOOR "band_floor"
#define KG_RK_BS_ABS_FLOOR "abs_floor_us"
#define KG_RK_BS_COMPUTE_FLOOR "compute_floor" /* older reports only (no such floor now) */
#define KG_RK_BS_MIN_MARK_RUNS "min_mark_runs" /* --min-mark-runs */
#define KG_RK_BS_MARKS "marks"                 /* the marks file, "(none)" */
#define KG_RK_BENCH_DEVICE_CLASS "device_class"
#define KG_RK_BENCH_CEILINGS "ceilings"
#define KG_RK_CEIL_COPY_GBPS "copy_gbps"
#define KG_RK_CEIL_GEMM_TFLOPS "gemm_tflops"
#define KG_RK_CEIL_DETAIL "detail"
#define KG_RK_CEIL_ERROR "error" /* detail.error: why a ceiling was not measured */
#define KG_RK_CEIL_COPY "copy"
#define KG_RK_CEIL_GEMM "gemm"
#define KG_RK_CEIL_MEDIAN "median_us"
#define KG_RK_CEIL_SAMPLES "samples_us"
#define KG_RK_CEIL_SM_CLOCK "sm_clock_mhz"
#define KG_RK_CEIL_BYTES "bytes_per_copy"
#define KG_RK_CEIL_GBPS "gbps"
#define KG_RK_CEIL_M "m"
#define KG_RK_CEIL_N "n"
#define KG_RK_CEIL_K "k"
#define KG_RK_CEIL_TFLOPS "tflops"
#define KG_RK_CEIL_INPUTS "inputs"
#define KG_RK_CEIL_KERNELS "kernels"         /* [KG_FIG_KERNEL_*] */
#define KG_RK_CEIL_POWER_STATE "power_state" /* {KG_FIG_POWER_*}: the state it was timed in */
#define KG_RK_CEIL_BLOCK_TIMEOUTS "blocking_timeouts"
#define KG_RK_BENCH_NVML_START "nvml_start" /* {KG_FIG_NVML_*} */
#define KG_RK_BENCH_NVML_END "nvml_end"
#define KG_RK_BENCH_WALL "wall_s"

/* counters (the counters gate's run-level record) */
#define KG_RK_COUNTERS "counters"
#define KG_RK_CT_DEVICE_CLASS "device_class"
#define KG_RK_CT_CHIP "chip"       /* CUPTI's chip name, "GH100" */
#define KG_RK_CT_PASSES "passes"   /* replay passes per kernel */
#define KG_RK_CT_METRICS "metrics" /* figure -> resolved metric name, null: none */
#define KG_RK_CT_SKIPPED "skipped" /* why every case was SKIP (permission, ...) */
#define KG_RK_CT_TOLERANCE "tolerance_rel"
#define KG_RK_CT_MODEL_FACTOR "model_factor"
#define KG_RK_CT_MARKS "marks"
#define KG_RK_CT_PROFILED_S "profiled_s" /* the profiled launches, replays included */
#define KG_RK_CT_WALL "wall_s"

/* marks_update (`run --production` only): what the advance did */
#define KG_RK_MARKS_UPDATE "marks_update"
#define KG_RK_MU_COMMITTED "committed"
#define KG_RK_MU_REF "ref"
#define KG_RK_MU_FILE "file"
#define KG_RK_MU_COMMIT "commit"
#define KG_RK_MU_MOVED "moved"
#define KG_RK_MU_PUSHED "pushed"
#define KG_RK_MU_ATTEMPTS "attempts"
#define KG_RK_MU_REASON "reason" /* not advancing: what did not pass */
#define KG_RK_MU_ERROR "error"   /* the commit failed */
/* marks_source (`bench`, `run`): where the marks the bench decided against came from */
#define KG_RK_MARKS_SOURCE "marks_source"
#define KG_RK_MS_KIND "kind"     /* "file", "ref" or "none" */
#define KG_RK_MS_PATH "path"     /* the file; for a ref, its path in the tree */
#define KG_RK_MS_REF "ref"       /* kind "ref": the ref as given */
#define KG_RK_MS_COMMIT "commit" /* kind "ref": the commit read */
/* an interrupted run (SIGINT/SIGTERM): the results so far */
#define KG_RK_INCOMPLETE "incomplete"
#define KG_RK_STOPPED_AT "stopped_at" /* where it stopped: "parity, in case 3 of 31 (ID)" */
/* timing: where the run's wall time went (host wall clock, seconds; not a kernel timing) */
#define KG_RK_TIMING "timing"
#define KG_RK_TIMING_TOTAL "total_s" /* kg_run_begin to the report's writing */
#define KG_RK_TIMING_PARTS "parts"   /* [{name, wall_s, cases, phases}] in run order */
#define KG_RK_TIMING_NAME "name"     /* a gate, "selftest", "selftest/<pass>", ... */
#define KG_RK_TIMING_WALL "wall_s"
#define KG_RK_TIMING_CASES "cases"   /* results recorded in this part */
#define KG_RK_TIMING_PHASES "phases" /* the cases' summed phase seconds (below) */
#define KG_RK_TIMING_BEGIN "begin_s" /* a gate's own begin (gate->begin; 0 for other parts) */
#define KG_RK_TIMING_END "end_s"     /* a gate's own end (gate->end) */
/* phase seconds: one key per kind (core/phase.c), in results[].timing and parts[].phases */
#define KG_RK_PHASE_WALL "wall_s" /* their sum */
#define KG_RK_PHASE_SETUP "setup_s"
#define KG_RK_PHASE_PREPARE "prepare_s"
#define KG_RK_PHASE_REFERENCE "reference_s"
#define KG_RK_PHASE_WORK "work_s"
#define KG_RK_PHASE_TEARDOWN "teardown_s"
/* shard (`--shard I/N`, core/shard.c; a merged report, report/merge.c): the part a run is */
#define KG_RK_SHARD "shard"
#define KG_RK_SHARD_INDEX "index"                   /* I of I/N (absent in a merged report) */
#define KG_RK_SHARD_COUNT "count"                   /* N */
#define KG_RK_SHARD_SELECTION_N "selection_n"       /* cases of the whole selection (every shard) */
#define KG_RK_SHARD_SELECTION_HASH "selection_hash" /* SHA-256 of its ids, sorted */
#define KG_RK_SHARD_ASSIGNMENT_HASH "assignment_hash" /* SHA-256 of "id\tweight" lines */
#define KG_RK_SHARD_BALANCE "balance"                 /* KG_RV_SHARD_BALANCE_* */
#define KG_RK_SHARD_CASES "cases"                     /* the ids this shard ran (merged: all) */
#define KG_RK_SHARD_MERGED "merged"                   /* true: `kgate report --merge` wrote it */
#define KG_RK_SHARD_PARTS "parts"                     /* merged: [{index, report, run_id, ...}] */
#define KG_RK_SHARD_PART_REPORT "report"              /* the shard report's path, as given */
#define KG_RK_SHARD_PART_RUN_ID "run_id"
#define KG_RK_SHARD_PART_STARTED_AT "started_at"
#define KG_RK_SHARD_PART_DEVICE_UUID "device_uuid"     /* null without a GPU */
#define KG_RK_SHARD_PART_DEVICE_SERIAL "device_serial" /* null when unavailable */
#define KG_RK_SHARD_PART_RUNNER "runner" /* provenance RUNNER_NAME/CI_RUNNER_DESCRIPTION */
#define KG_RV_SHARD_BALANCE_MARKS "marks"
#define KG_RV_SHARD_BALANCE_COUNT "case count"
#define KG_RK_MV_CASE "case" /* moved[]: one mark that moved */
#define KG_RK_MV_DEVICE_CLASS "device_class"
#define KG_RK_MV_METRIC "metric"
#define KG_RK_MV_OLD "old" /* null: the case had no mark */
#define KG_RK_MV_NEW "new"
#define KG_RK_MV_BAND "band_rel"

/* ---- one result ----------------------------------------------------------------------------- */

#define KG_RES_GATE "gate"
#define KG_RES_CASE "case"
#define KG_RES_VERDICT "verdict" /* PASS WARN FAIL SKIP ERROR XFAIL XPASS */
#define KG_RES_MESSAGE "message"
#define KG_RES_FIGURES "figures" /* object, {} when the gate has none */
#define KG_RES_TIMING "timing"   /* phase seconds of this case in this gate (optional) */
#define KG_RES_DEVICE "device"   /* --devices: the GPU ordinal that ran it (optional) */

/* ---- a faulted case (any gate; verdict ERROR): figures.fault ---------------------------------- */
#define KG_FIG_FAULT "fault" /* in the figures of any gate: */
#define KG_FIG_PARITY_FAULT "fault"
#define KG_FIG_PF_FAULT "fault"
#define KG_FIG_HP_FAULT "fault"
#define KG_FIG_AB_FAULT "fault"
#define KG_FIG_FAULT_CLASS "class"   /* signal | exit | timeout | cuda | interrupted */
#define KG_FIG_FAULT_SIGNAL "signal" /* SIGSEGV, SIGABRT, SIGBUS, ... */
#define KG_FIG_FAULT_EXIT_STATUS "exit_status"
#define KG_FIG_FAULT_CUDA_ERROR "cuda_error" /* cudaErrorIllegalAddress, ... */
#define KG_FIG_FAULT_TIMEOUT "timeout_s"
#define KG_FIG_FAULT_GATE "gate"
#define KG_FIG_FAULT_PHASE "phase"        /* setup, launch, reference, capture, timing, ... */
#define KG_FIG_FAULT_OUTPUT "output_tail" /* the last lines the worker printed */
#define KG_FIG_FAULT_PROCESS "process"    /* run --production: which bench process (1..N) */
/* what the gate had observed before the fault (a forbidden call): the verdict is FAIL */
#define KG_FIG_FAULT_EVIDENCE "evidence"

/* ---- parity figures ------------------------------------------------------------------------- */

#define KG_FIG_PARITY_POLICY "policy"               /* "bitwise" | "tolerance" */
#define KG_FIG_PARITY_LIMIT_MAX_ABS "limit_max_abs" /* tolerance only */
#define KG_FIG_PARITY_LIMIT_REL_L2 "limit_rel_l2"
#define KG_FIG_PARITY_LIMIT_MIN_COSINE "limit_min_cosine"
#define KG_FIG_PARITY_REFERENCE "reference"
#define KG_FIG_PARITY_ELEMENTS "elements"
#define KG_FIG_PARITY_MAX_ABS "max_abs" /* null when not finite */
#define KG_FIG_PARITY_REL_L2 "rel_l2"
#define KG_FIG_PARITY_COSINE "cosine"
#define KG_FIG_PARITY_NONFINITE_OUT "nonfinite_out"
#define KG_FIG_PARITY_MISMATCHED "mismatched" /* bytes */
#define KG_FIG_PARITY_FIRST_BAD_INDEX "first_bad_index"
#define KG_FIG_PARITY_WORST_OUTPUT "worst_output" /* several outputs: the top's figures' */
#define KG_FIG_PARITY_OUTPUTS "outputs"           /* several outputs: one object each: */
#define KG_FIG_PARITY_OUTPUT_NAME "name"          /* with the figures above */
#define KG_FIG_PARITY_OUTPUT_DTYPE "dtype"
#define KG_FIG_PARITY_OUTPUT_PASS "pass"

/* ---- preflight figures ---------------------------------------------------------------------- */

#define KG_FIG_PF_PATH "path"                   /* "runtime" | "static"; also per row */
#define KG_FIG_PF_KERNELS "kernels"             /* one row per kernel x arch: */
#define KG_FIG_PF_EXPECT_REASON "expect_reason" /* defect cases of this gate */
#define KG_FIG_PF_KERNEL "kernel"
#define KG_FIG_PF_SYMBOL "symbol"
#define KG_FIG_PF_ARCH "arch"
#define KG_FIG_PF_VERDICT "verdict"
#define KG_FIG_PF_REASONS "reasons"
#define KG_FIG_PF_REGISTERS "registers" /* also baseline.registers */
#define KG_FIG_PF_LOCAL_BYTES "local_bytes"
#define KG_FIG_PF_STATIC_SMEM "static_smem" /* also static_agreement.static_smem */
#define KG_FIG_PF_CONST_BYTES "const_bytes"
#define KG_FIG_PF_MAX_THREADS "max_threads_per_block"
#define KG_FIG_PF_PTX_VERSION "ptx_version" /* runtime rows */
#define KG_FIG_PF_BINARY_VERSION "binary_version"
#define KG_FIG_PF_BLOCK_THREADS "block_threads"
#define KG_FIG_PF_DYNAMIC_SMEM "dynamic_smem"
#define KG_FIG_PF_BLOCKS_PER_SM "blocks_per_sm" /* also baseline.blocks_per_sm */
#define KG_FIG_PF_CALC_BLOCKS_PER_SM "calc_blocks_per_sm"
#define KG_FIG_PF_ACTIVE_WARPS "active_warps"
#define KG_FIG_PF_OCCUPANCY "occupancy"
#define KG_FIG_PF_LIMITER "limiter"
#define KG_FIG_PF_LIMITER_WORDS "limiter_words"
#define KG_FIG_PF_REG_HEADROOM "reg_headroom"
#define KG_FIG_PF_BASELINE "baseline" /* {registers, blocks_per_sm} or null */
#define KG_FIG_PF_ALLOWLISTED_LOCAL "allowlisted_local_bytes"
#define KG_FIG_PF_STATIC_AGREEMENT "static_agreement" /* runtime rows: */
#define KG_FIG_PF_STATIC_FOUND "static_found"
#define KG_FIG_PF_AGREE "agree"
#define KG_FIG_PF_STATIC_REGISTERS "static_registers"
#define KG_FIG_PF_STATIC_LOCAL_BYTES "static_local_bytes"
#define KG_FIG_PF_STATIC_BLOCKS_PER_SM "static_blocks_per_sm"

/* ---- hotpath figures ------------------------------------------------------------------------ */

#define KG_FIG_HP_EXPECT_REASON "expect_reason" /* defect cases of this gate */
#define KG_FIG_HP_PASS "pass"                   /* in each check object */
#define KG_FIG_HP_DETERMINISM "determinism"
#define KG_FIG_HP_RUNS "runs"
#define KG_FIG_HP_MISMATCHED_RUNS "mismatched_runs"
#define KG_FIG_HP_FIRST_MISMATCH_RUN "first_mismatch_run"
#define KG_FIG_HP_FIRST_MISMATCH_BYTE "first_mismatch_byte"
#define KG_FIG_HP_CALLS "calls"
#define KG_FIG_HP_OBSERVED_LAUNCHES "observed_launches"
#define KG_FIG_HP_API_CALLS "api_calls"
#define KG_FIG_HP_FORBIDDEN "forbidden" /* [{api, via, category, detail, ...}] */
#define KG_FIG_HP_API "api"
#define KG_FIG_HP_VIA "via"
#define KG_FIG_HP_CATEGORY "category"
#define KG_FIG_HP_DETAIL "detail" /* also graph.detail */
#define KG_FIG_HP_COUNT "count"
#define KG_FIG_HP_BACKTRACE "backtrace"
#define KG_FIG_HP_UM "unified_memory" /* calls.unified_memory: CUPTI UM counters */
#define KG_FIG_HP_UM_AVAILABLE "available"
#define KG_FIG_HP_NOTE "note" /* why not available; launch-config notes */
#define KG_FIG_HP_UM_HTOD "htod_bytes"
#define KG_FIG_HP_UM_DTOH "dtoh_bytes"
#define KG_FIG_HP_UM_GPU_FAULTS "gpu_page_fault_groups"
#define KG_FIG_HP_UM_CPU_FAULTS "cpu_page_faults" /* only where the platform counts them */
#define KG_FIG_HP_LAUNCH_CONFIGS "launch_configs" /* observed launches vs kernels[] */
#define KG_FIG_HP_LC_OBSERVED "observed"          /* [{kernel, block_threads, ...}] */
#define KG_FIG_HP_LC_KERNEL "kernel"
#define KG_FIG_HP_LC_THREADS "block_threads"
#define KG_FIG_HP_LC_SMEM "dynamic_smem"
#define KG_FIG_HP_LC_LAUNCHES "launches"
#define KG_FIG_HP_LC_DECL_THREADS "declared_block_threads" /* its first declaration */
#define KG_FIG_HP_LC_DECL_SMEM "declared_dynamic_smem"
#define KG_FIG_HP_LC_MATCH "match"                    /* some declaration states it */
#define KG_FIG_HP_LC_UNDECLARED "undeclared_launches" /* kernels not in kernels[] (cuBLAS) */
#define KG_FIG_HP_LC_DROPPED "dropped_launches"       /* past the watch's table, not judged */
#define KG_FIG_HP_BATCH "batch_invariance"
#define KG_FIG_HP_CHECKED "checked"
#define KG_FIG_HP_MAX_BATCH "max_batch"
#define KG_FIG_HP_ROW_BYTES "row_bytes"
#define KG_FIG_HP_FAILED_BATCH "failed_batch"
#define KG_FIG_HP_FAILED_ROW "failed_row"
#define KG_FIG_HP_GRAPH "graph"
#define KG_FIG_HP_STAGE "stage" /* ok capture instantiate replay compare */
#define KG_FIG_HP_CUDA_ERROR "cuda_error"
#define KG_FIG_HP_REPLAYS "replays"

/* ---- bench figures (gate "bench") ----------------------------------------------------------- */

/* the decision (kg_bench_verdict_json); the marks pipeline reads decision, metric, direction,
 * median_us, ci_lo_us, ci_hi_us, band_rel, samples */
#define KG_FIG_DECISION "decision" /* IMPROVED | NO_MARK | SAME | REGRESSED */
#define KG_FIG_RUN_NOISE "run_noise_rel"
#define KG_FIG_DELTA "delta_rel" /* with a mark: change, > 0 worse */
#define KG_FIG_CI_DELTA_LO "ci_delta_lo"
#define KG_FIG_CI_DELTA_HI "ci_delta_hi"
#define KG_FIG_TOLERANCE "tolerance_rel" /* the band the change had to clear */
#define KG_FIG_FLOOR "floor_rel"
#define KG_FIG_MARK_NOISE "mark_noise_rel"
#define KG_FIG_SIGNIFICANT "significant"
#define KG_FIG_TEST "test" /* "ci-disjoint" | "mann-whitney-u" */
#define KG_FIG_P_VALUE "p_value"
#define KG_FIG_WHY "why"
#define KG_FIG_MARK "mark" /* the mark compared with: */
#define KG_FIG_MARK_VALUE "value"
#define KG_FIG_MARK_CI_LO "ci_lo"
#define KG_FIG_MARK_CI_HI "ci_hi"
#define KG_FIG_MARK_RUNS "runs"
#define KG_FIG_MARK_COMMIT "commit"
#define KG_FIG_MARK_DATE "date"
#define KG_FIG_MARK_RUN_ID "run_id"
#define KG_FIG_MARK_KERNELS "kernels" /* "a;b": the kernels the mark ran */
/* what the run and the mark were measured with, the processes behind a decision */
#define KG_FIG_MARK_K "k"                        /* mark.k: launches per replay the mark used */
#define KG_FIG_MARK_POWER_STATE "power_state"    /* mark.power_state */
#define KG_FIG_RUN_K "run_k"                     /* launches per replay of this run */
#define KG_FIG_RUN_POWER_STATE "run_power_state" /* the power state the decision compared */
#define KG_FIG_PROCESSES "processes" /* separate processes combined (1: this one alone) */
#define KG_FIG_ENV_LO "env_lo_us"    /* processes >= 2: lowest per-process median */
#define KG_FIG_ENV_HI "env_hi_us"    /* processes >= 2: highest per-process median */
#define KG_FIG_PROC_MEDIANS "process_medians_us"
#define KG_FIG_PROC_DECISIONS "process_decisions" /* each process's own decision */
/* this run */
#define KG_FIG_METRIC "metric"         /* "time_us_warm", "time_us_cold" */
#define KG_FIG_MEDIAN "median_us"      /* of the decided samples (see time_basis) */
#define KG_FIG_TIME_BASIS "time_basis" /* "measured" | "replay-clock-normalised" */
#define KG_RV_TB_MEASURED "measured"
#define KG_RV_TB_NORMALISED "replay-clock-normalised" /* an older kgate: "clock-normalised" */
#define KG_FIG_RAW_MEDIAN "raw_median_us"             /* the measured times, whatever the basis */
#define KG_FIG_RAW_CI_LO "raw_ci_lo_us"
#define KG_FIG_RAW_CI_HI "raw_ci_hi_us"
#define KG_FIG_PLACEMENTS "placements"                  /* fresh-buffer placements pooled */
#define KG_FIG_PLACEMENT_MEDIANS "placement_medians_us" /* placements >= 2: each one's median */
#define KG_FIG_PLACEMENT_HALF "placement_half_rel"      /* the placement-level half-width */
#define KG_FIG_PS_PLACEMENT_STARTS "placement_starts" /* per_sample: each placement's first index */
/* what users pay, beside the decided (replay-clock-normalised) basis */
#define KG_FIG_MEASURED_MEDIAN "measured_median_us" /* mark.measured_median_us */
/* the run's (also the mark's) measured spread */
#define KG_FIG_MEASURED_SPREAD "measured_spread_rel"
/* vs mark.measured_median_us, > 0 slower */
#define KG_FIG_MEASURED_CHANGE "measured_time_change_rel"
#define KG_FIG_MEASURED_TOL "measured_tolerance_rel"
#define KG_FIG_MEASURED_SIGNIFICANT "measured_significant"
#define KG_FIG_ENERGY_PER_LAUNCH "energy_per_launch_mj" /* the run's (also the mark's) median */
#define KG_FIG_ENERGY_SPREAD "energy_spread_rel"
#define KG_FIG_ENERGY_CHANGE "energy_change_rel" /* vs mark.energy_per_launch_mj, > 0 worse */
#define KG_FIG_ENERGY_TOL "energy_tolerance_rel"
#define KG_FIG_ENERGY_SOURCE "energy_source" /* "nvml-total-energy"; absent: none */
#define KG_RV_ENERGY_NVML "nvml-total-energy"
#define KG_FIG_ENERGY_BASIS "energy_basis" /* "per-sample" | "per-placement" */
#define KG_FIG_ENERGY_UNITS "energy_units" /* samples or placements of the median */
#define KG_FIG_ENERGY_WINDOW_LAUNCH "energy_window_launch_us" /* the window's launch GPU time */
#define KG_FIG_ENERGY_POWER_W "energy_power_w"                /* the window's power (W) */
#define KG_FIG_ENERGY_PERIOD_MAX_W "energy_period_max_w"      /* its largest period's (W) */
#define KG_FIG_ENERGY_NOTE "energy_note"                      /* why there is no energy figure */
#define KG_FIG_PAY_GATE "pay_gate"   /* "regressed" | "within" | "not-gated" */
#define KG_FIG_PS_ENERGY "energy_mj" /* per_sample: the counter's delta; null: not read */
#define KG_FIG_CI_LO "ci_lo_us"
#define KG_FIG_CI_HI "ci_hi_us"
#define KG_FIG_BAND "band_rel"       /* the run's noise band; also mark.band_rel */
#define KG_FIG_SAMPLES "samples"     /* kept samples; also mark.samples */
#define KG_FIG_DIRECTION "direction" /* optional: "higher_is_better"; default lower */
#define KG_FIG_OP "op"
#define KG_FIG_MODE "mode" /* "warm" | "cold" */
#define KG_FIG_LAUNCHES_PER_SAMPLE "launches_per_sample"
#define KG_FIG_TIMING "timing"
#define KG_FIG_SAMPLES_TAKEN "samples_taken"
#define KG_FIG_SAMPLES_DROPPED "samples_dropped"
#define KG_FIG_MAD "mad_us"
#define KG_FIG_Q1 "q1_us"
#define KG_FIG_Q3 "q3_us"
#define KG_FIG_IQR "iqr_us"
#define KG_FIG_MIN "min_us"
#define KG_FIG_MAX "max_us"
#define KG_FIG_MEAN "mean_us"
#define KG_FIG_CI_LEVEL "ci_level"
#define KG_FIG_CI_COVERAGE "ci_coverage"
#define KG_FIG_CI_REL_WIDTH "ci_rel_width"
#define KG_FIG_TARGET_CI_REL "target_ci_rel"
#define KG_FIG_STOP_REASON "stop_reason"
#define KG_FIG_BUDGET "budget_s"
#define KG_FIG_ELAPSED "elapsed_s"        /* the case's timing wall time */
#define KG_FIG_WINDOW_S "energy_window_s" /* of it: the energy window's wall time */
#define KG_FIG_TRACE_S "trace_s"          /* of it: the kernel trace's wall time */
#define KG_FIG_OPEN_S "open_s"            /* of it: the instances' open and close */
#define KG_FIG_CALIBRATE_S "calibrate_s"  /* of it: warm-up launches and k's estimate */
#define KG_FIG_CAPTURE_S "capture_s"      /* of it: the graph's capture and first replay */
#define KG_FIG_SAMPLE_S "sample_s"        /* of it: the timed samples (after the warm-up) */
#define KG_FIG_NVML_S "nvml_s"            /* of sample_s: inside NVML's calls */
#define KG_FIG_SM_CLOCK_MEDIAN "sm_clock_median_mhz"
#define KG_FIG_REPLAY_CLOCK_MEDIAN "replay_sm_clock_median_mhz" /* window stamps, kept samples */
#define KG_FIG_SM_CLOCK_MIN "sm_clock_min_mhz"
#define KG_FIG_SM_CLOCK_MAX "sm_clock_max_mhz"
#define KG_FIG_SM_CLOCK_FLOOR "sm_clock_floor_mhz"
#define KG_FIG_BOUND "bound" /* "memory" | "compute" */
#define KG_FIG_BYTES_MOVED "bytes_moved"
#define KG_FIG_FLOPS "flops"
#define KG_FIG_GBPS "gbps"
#define KG_FIG_PCT_COPY_CEILING "pct_copy_ceiling"
#define KG_FIG_TFLOPS "tflops"
#define KG_FIG_PCT_GEMM_CEILING "pct_gemm_ceiling"
#define KG_FIG_KERNELS_CHANGED "kernels_changed" /* with a mark that lists its kernels */
#define KG_FIG_MARK_KERNELS_WAS "mark_kernels"   /* when they changed: the mark's */
#define KG_FIG_KERNELS "kernels"                 /* CUPTI: one per kernel the sample launched: */
#define KG_FIG_KERNEL_NAME "name"
#define KG_FIG_KERNEL_LAUNCHES "launches"
#define KG_FIG_KERNEL_NS "ns_per_launch"
#define KG_FIG_KERNEL_GRAPH_NODE "graph_node_id"
#define KG_FIG_NVML "nvml" /* NVML at the case's end (also bench.nvml_start/end) */
#define KG_FIG_NVML_SM_CLOCK "sm_clock_mhz"
#define KG_FIG_NVML_SM_CLOCK_MAX "sm_clock_max_mhz"
#define KG_FIG_NVML_MEM_CLOCK "mem_clock_mhz"
#define KG_FIG_NVML_TEMPERATURE "temperature_c"
#define KG_FIG_NVML_POWER "power_w"
#define KG_FIG_NVML_POWER_LIMIT "power_limit_w"
#define KG_FIG_NVML_EVENT_MASK "clock_event_mask"
#define KG_FIG_NVML_EVENT_REASONS "clock_event_reasons"
#define KG_FIG_PER_SAMPLE "per_sample" /* every sample taken, in order: */
#define KG_FIG_PS_TIME "time_us"
#define KG_FIG_PS_SM_CLOCK "sm_clock_mhz"            /* null where not measured */
#define KG_FIG_PS_WINDOW_CLOCK "window_sm_clock_mhz" /* during the replay; null: not measured */
#define KG_FIG_PS_DROPPED "dropped_index"
/* launch count and power state (bench_engine.c, bench_power.c) */
#define KG_FIG_LAUNCHES_SOURCE "launches_source"  /* "mark" | "flag" | "calibrated" | "cold" */
#define KG_FIG_BLOCKING_START "blocking_start"    /* replays held behind the blocking kernel */
#define KG_FIG_BLOCK_TIMEOUTS "blocking_timeouts" /* samples whose block timed out */
#define KG_FIG_POWER_STATE "power_state"          /* the state the samples were taken in: */
/* full-clock | power-capped | thermal | throttled | unknown (probe) */
#define KG_FIG_POWER_LABEL "label"
#define KG_FIG_POWER_STEADY "steady"   /* the warm-up reached a steady probe clock */
#define KG_FIG_POWER_HELD "held"       /* every sample's probe clock stayed in its band */
#define KG_FIG_POWER_WARMUP "warmup_s" /* back-to-back warm-up (outside the budget) */
#define KG_FIG_POWER_POLLS "polls"     /* NVML polls while sampling */
/* the state from the clock probe, NVML beside it */
#define KG_FIG_POWER_CLOCK_SOURCE "clock_source"       /* "probe" | "none" */
#define KG_FIG_POWER_HEAVY "heavy"                     /* warmed as power-hungry */
#define KG_FIG_POWER_WARMUP_MIN "warmup_min_s"         /* the minimum warm-up in force */
#define KG_FIG_POWER_WARMUP_READINGS "warmup_readings" /* probe readings while warming */
#define KG_FIG_POWER_MAX_MHZ "max_sm_mhz"              /* the max SM clock of the band */
#define KG_FIG_POWER_STEADY_MHZ "steady_sm_mhz"        /* the warm-up's steady probe clock */
#define KG_FIG_POWER_CLOCK_FRAC "clock_frac"           /* sm_mhz_median / max_sm_mhz */
#define KG_FIG_POWER_NVML_LABEL "nvml_label"           /* NVML reasons' label (context) */
#define KG_FIG_POWER_NVML_STEADY "nvml_steady"
#define KG_FIG_POWER_NVML_HELD "nvml_held"
#define KG_FIG_POWER_NVML_NEAR_LIMIT "nvml_near_limit" /* a poll read >= 95% of the limit */
#define KG_FIG_POWER_NVML_SM_MIN "nvml_sm_mhz_min"     /* NVML SM clock while sampling */
#define KG_FIG_POWER_NVML_SM_MEDIAN "nvml_sm_mhz_median"
#define KG_FIG_POWER_NVML_SM_MAX "nvml_sm_mhz_max"
#define KG_FIG_POWER_SM_MIN "sm_mhz_min" /* probe SM clock while sampling (kept samples) */
#define KG_FIG_POWER_SM_MEDIAN "sm_mhz_median"
#define KG_FIG_POWER_SM_MAX "sm_mhz_max"
#define KG_FIG_POWER_REASONS "reasons"           /* clock-event reason names of the state */
#define KG_FIG_POWER_REASONS_SEEN "reasons_seen" /* every reason seen while sampling */
#define KG_FIG_POWER_NOTE "note"                 /* why the state is unknown */
/* also KG_FIG_NVML_MEM_CLOCK, KG_FIG_NVML_POWER, KG_FIG_NVML_POWER_LIMIT,
 * KG_FIG_NVML_TEMPERATURE (last poll) */

/* ---- counters figures (gate "counters") ----------------------------------------------------- */

#define KG_FIG_CT_DECISION "decision" /* KG_RV_CT_*: OK | REGRESSED | MODEL_WRONG | ... */
#define KG_RV_CT_OK "OK"
#define KG_RV_CT_REGRESSED "REGRESSED"
#define KG_RV_CT_MODEL_WRONG "MODEL_WRONG"
#define KG_RV_CT_NO_DATA "NO_DATA"
#define KG_RV_CT_NO_MARK "NO_MARK"
#define KG_RV_CT_INVALID "INVALID" /* ERROR: the counts time nothing or cannot be */
#define KG_RV_CT_EXCESS "EXCESS"   /* WARN: DRAM traffic beyond the work model */
#define KG_FIG_CT_WHY "why"
#define KG_FIG_CT_DEVICE_CLASS "device_class"
#define KG_FIG_CT_KERNELS "kernels" /* kernels (ranges) in one launch */
#define KG_FIG_CT_PASSES "passes"
#define KG_FIG_CT_WALL "wall_s" /* the profiled launch, replays included */
#define KG_FIG_CT_DECLARED_BYTES "declared_bytes"
#define KG_FIG_CT_DECLARED_FLOPS "declared_flops"
#define KG_FIG_CT_DRAM_BYTES "dram_bytes" /* per launch; null: counter unavailable */
#define KG_FIG_CT_L2_BYTES "l2_bytes"
#define KG_FIG_CT_SYSMEM_BYTES "sysmem_bytes"
#define KG_FIG_CT_SYSMEM_READ "sysmem_read_bytes" /* null: no read/write split */
#define KG_FIG_CT_SYSMEM_WRITE "sysmem_write_bytes"
#define KG_FIG_CT_TENSOR_FLOPS "tensor_flops" /* ops-path counters; part of flops */
#define KG_FIG_CT_FLOPS "flops"
#define KG_FIG_CT_FLOPS_PARTIAL "flops_partial" /* an FP counter was unavailable: lower bound */
#define KG_FIG_CT_INST "inst"
#define KG_FIG_CT_SPILL "spill_requests"
#define KG_FIG_CT_TENSOR "tensor_inst"
#define KG_FIG_CT_OCCUPANCY "occupancy_pct"
#define KG_FIG_CT_BYTES_RATIO "bytes_ratio" /* measured / declared */
#define KG_FIG_CT_BYTES_BASIS "bytes_basis" /* "dram" | "l2" (the case fits in L2) */
#define KG_FIG_CT_FLOPS_RATIO "flops_ratio"
#define KG_FIG_CT_TIME "time_s" /* the counters pass's kernel time per launch */
#define KG_FIG_CT_AI "ai"       /* FLOP per DRAM byte */
#define KG_FIG_CT_TFLOPS "tflops"
#define KG_FIG_CT_GBPS "gbps"
#define KG_FIG_CT_BOUND "bound"           /* memory | compute | latency */
#define KG_FIG_CT_METRICS "metrics"       /* every figure of the metric table, by key */
#define KG_FIG_CT_MARK_MOVES "mark_moves" /* the counter marks this run may set or move */

/* ---- ab figures (gate "ab": B against A, paired rounds) ------------------------------------- */

#define KG_FIG_AB_DECISION "decision" /* SAME | B_FASTER | B_SLOWER */
#define KG_FIG_AB_RATIO_MEDIAN "ratio_median"
#define KG_FIG_AB_RATIO_CI_LO "ratio_ci_lo"
#define KG_FIG_AB_RATIO_CI_HI "ratio_ci_hi"
#define KG_FIG_AB_CI_COVERAGE "ci_coverage"
#define KG_FIG_AB_RATIO_GEOMEAN "ratio_geomean"
#define KG_FIG_AB_ROUNDS "rounds"
#define KG_FIG_AB_B_SLOWER_ROUNDS "b_slower_rounds"
#define KG_FIG_AB_B_FASTER_ROUNDS "b_faster_rounds"
#define KG_FIG_AB_P_SIGN "p_sign"
#define KG_FIG_AB_BAND_FLOOR "band_floor"
#define KG_FIG_AB_A_MEDIANS "a_median_us"
#define KG_FIG_AB_B_MEDIANS "b_median_us"
#define KG_FIG_AB_A_EXE "a_exe"
#define KG_FIG_AB_B_EXE "b_exe"

/* counters gate: counts that time nothing, excess traffic, the replay and flush */
#define KG_FIG_CT_DRAM_RATIO "dram_ratio"       /* DRAM bytes / bytes_moved (excess check) */
#define KG_FIG_CT_BYTES_BINDING "bytes_binding" /* the case declares its bytes binding */
#define KG_FIG_CT_LAUNCH_EMPTY "launch_empty"   /* a capture of launch() held no node */
#define KG_RK_CT_REPLAY "replay"                /* "user" (L2 flushed every pass) | "kernel" */
#define KG_RK_CT_DRAM_PEAK "dram_peak_bps"      /* DRAM peak from clock x bus width; 0: unknown */

#endif
